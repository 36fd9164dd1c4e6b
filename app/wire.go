package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/app/storetable"
	"github.com/gatehouse-bot/gatehouse/attach"
	"github.com/gatehouse-bot/gatehouse/budget"
	"github.com/gatehouse-bot/gatehouse/checkpoint"
	"github.com/gatehouse-bot/gatehouse/cluster"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/core/tools/mcp"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/supervise"
	"github.com/gatehouse-bot/gatehouse/store"
)

// buildTools registers the built-in tools; cp, when not nil, records the
// workspace before every changing call; files, when not nil, are the
// gateways send_file sends through.
func buildTools(cfg *config.Config, sec *secrets.Set, cp tools.Checkpointer, files core.FileSenders, log zerolog.Logger) (*tools.Registry, error) {
	timeouts := make(map[string]time.Duration, len(cfg.Tools.Timeouts))
	for name, d := range cfg.Tools.Timeouts {
		timeouts[name] = d.D()
	}
	reg := tools.NewRegistry(tools.Options{
		Timeouts:     timeouts,
		MaxOutput:    cfg.Tools.MaxOutput,
		Secrets:      sec,
		Checkpointer: cp,
		Log:          log,
	})
	sandbox, warnings := supervise.Choose(cfg.Tools.Sandbox)
	for _, w := range warnings {
		log.Warn().Str("sandbox", sandbox.String()).Msg(w)
	}
	err := tools.RegisterBuiltins(reg, tools.BuiltinOptions{
		Workspace:   cfg.Tools.Workspace,
		Secrets:     sec,
		EnvPrefixes: gatewaytable.EnvPrefixes(),
		HTTP:        tools.HTTPOptions{AllowPrivate: cfg.Tools.HTTP.AllowPrivate, MaxBytes: cfg.Tools.HTTP.MaxBytes},
		Sandbox:     sandbox, // the supervisor is this binary, re-executed
		Files:       files,
	})
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	return reg, nil
}

// MCPServers converts mcp.servers to the manager's configuration: the
// enabled servers only.
func MCPServers(cfg *config.Config) []mcp.ServerConfig {
	var out []mcp.ServerConfig
	for _, s := range cfg.MCP.Servers {
		if !s.On() {
			continue
		}
		c := mcp.ServerConfig{
			Name: s.Name, Command: s.Command, Args: s.Args, Dir: s.Cwd, URL: s.URL,
			StartTimeout: s.StartTimeout.D(), Timeout: s.Timeout.D(),
		}
		if len(s.Env) > 0 {
			c.Env = make(map[string]string, len(s.Env))
			for k, v := range s.Env {
				c.Env[k] = v.Value()
			}
		}
		if len(s.Headers) > 0 {
			c.Headers = make(map[string]string, len(s.Headers))
			for k, v := range s.Headers {
				c.Headers[k] = v.Value()
			}
		}
		out = append(out, c)
	}
	return out
}

// buildMCP returns the manager of the enabled MCP servers, whose tools go
// into reg, or nil when there is none.
func buildMCP(cfg *config.Config, reg *tools.Registry, sec *secrets.Set, log zerolog.Logger) (*mcp.Manager, error) {
	servers := MCPServers(cfg)
	if len(servers) == 0 {
		return nil, nil
	}
	m, err := mcp.New(servers, mcp.Options{Registry: reg, Secrets: sec, Log: log})
	if err != nil {
		return nil, fmt.Errorf("mcp.servers: %w", err)
	}
	return m, nil
}

// buildCheckpoints returns the workspace checkpoints over the store, or
// nil when tools.checkpoints.enabled is false. On a store several
// instances share (store.Sharer) the blobs are in its database
// (store.CheckpointBlobStore), so that /undo works from any instance;
// otherwise in the directory beside the store, as always. On a shared
// store the workspace is held through its leases too, as instance: an
// /undo is refused while another instance runs a changing call. Its
// collection of blobs no checkpoint names waits for the first receive
// (collectCheckpointsAfter) or the first checkpoint, whichever comes first.
func buildCheckpoints(ctx context.Context, cfg *config.Config, st store.Store, instance string, fence *cluster.Fence, now func() time.Time, log zerolog.Logger) (*checkpoint.Manager, error) {
	c := cfg.Tools.Checkpoints
	if !c.Enabled {
		return nil, nil
	}
	o := checkpoint.Options{
		Workspace: cfg.Tools.Workspace,
		MaxFile:   int64(c.MaxFile), MaxTotal: int64(c.MaxTotal), Keep: c.Keep,
		Index: st, Audit: stampAudit(st, instance), Log: log, Now: now,
		CollectLater: true,
	}
	if sh, ok := st.(store.Sharer); ok && sh.Shared() {
		table, ok := st.(store.CheckpointBlobStore)
		if !ok {
			return nil, errors.New("tools.checkpoints: this store is shared but cannot keep checkpoint blobs")
		}
		o.BlobStore, o.Shared = checkpoint.NewTableBlobs(table, o.MaxFile, 0), true
		o.Leases, o.Instance, o.LeaseTTL = cluster.PrefixLeases{Leases: st}, instance, cfg.Store.LeaseTTL.D()
		if fence != nil {
			o.Fence = fence
		}
	} else {
		blobs, err := storetable.Blobs(cfg)
		if err != nil {
			return nil, err
		}
		o.Blobs = blobs
	}
	if err := os.MkdirAll(cfg.Tools.Workspace, 0o700); err != nil {
		return nil, fmt.Errorf("tools.workspace: %w", err)
	}
	m, err := checkpoint.New(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("tools.checkpoints: %w", err)
	}
	return m, nil
}

// buildProvider returns the cascade over llm.providers, or the offline demo
// model when none is configured. Each provider's requests are priced at
// its own price (b.Priced) and recorded in rec under its own name
// (llm.Observed), a failed-over one's too.
func buildProvider(cfg *config.Config, log zerolog.Logger, rec llm.Recorder, b *budget.Budget) (llm.Provider, error) {
	p, _, err := buildProviders(cfg, log, rec, b)
	return p, err
}

// mediaAbilities are what the built providers can do with attachments.
type mediaAbilities struct {
	// vision: some provider takes images (each other one drops them).
	vision bool
	// transcriber is llm.transcribe's provider's; nil when unset or that
	// provider was skipped.
	transcriber llm.Transcriber
}

// buildProviders is buildProvider, also returning the providers' media
// abilities for the attachments receiver.
func buildProviders(cfg *config.Config, log zerolog.Logger, rec llm.Recorder, b *budget.Budget) (llm.Provider, mediaAbilities, error) {
	var media mediaAbilities
	ps := make([]llm.Provider, 0, len(cfg.LLM.Providers))
	for i, p := range cfg.LLM.Providers {
		if why := ProviderSkipped(p); why != "" {
			log.Warn().Str("provider", p.Name).Str("reason", why).Msg("llm provider skipped")
			continue
		}
		prov, err := newOpenAI(cfg, p, nil)
		if err != nil {
			return nil, media, fmt.Errorf("llm.providers[%d]: %w", i, err)
		}
		media.vision = media.vision || p.Vision
		if t := cfg.LLM.Transcribe; t.Provider != "" && t.Provider == p.Name {
			media.transcriber = prov.Transcriber(t.Model)
		}
		ps = append(ps, llm.Observed(b.Priced(prov), rec))
	}
	if t := cfg.LLM.Transcribe; t.Provider != "" && media.transcriber == nil {
		log.Warn().Str("provider", t.Provider).Msg("llm.transcribe: its provider was skipped; voice notes are saved as files only")
	}
	switch len(ps) {
	case 0:
		log.Warn().Msg("no usable llm provider: running the offline DEMO model, which only knows a few intents. Set OPENAI_API_KEY (or configure llm.providers) for real answers")
		return llm.Observed(llm.NewDemo(), rec), media, nil
	case 1:
		return ps[0], media, nil
	}
	return llm.NewCascade(log, ps...), media, nil
}

// newOpenAI returns the client of provider p; hc, when not nil, is its
// HTTP client (and connections), else it gets its own.
func newOpenAI(cfg *config.Config, p config.Provider, hc *http.Client) (*llm.OpenAI, error) {
	timeout := p.Timeout.D()
	if timeout == 0 {
		timeout = cfg.LLM.Timeout.D()
	}
	return llm.NewOpenAI(llm.OpenAIConfig{
		Name: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey.Value(), Model: p.Model,
		Stream: p.Stream, Timeout: timeout, Vision: p.Vision, HTTPClient: hc,
	})
}

// buildAttachments returns the receiver of files sent with messages.
func buildAttachments(cfg *config.Config, media mediaAbilities, audit attach.Audit, usage core.UsageRecorder, now func() time.Time, log zerolog.Logger) (*attach.Receiver, error) {
	a := cfg.Attachments
	r, err := attach.New(attach.Options{
		Workspace: cfg.Tools.Workspace, Dir: a.Dir, MaxBytes: int64(a.MaxBytes),
		Images: media.vision, MaxImages: a.MaxImages,
		Transcriber: media.transcriber, TranscribeTimeout: cfg.LLM.Transcribe.Timeout.D(),
		Usage: usage, Audit: audit, Log: log, Now: now,
	})
	if err != nil {
		return nil, fmt.Errorf("attachments: %w", err)
	}
	return r, nil
}

// Tools returns the tool registry the bot runs with cfg: the built-in
// tools over cfg.Tools.Workspace (created if missing). `bot policy test`
// uses it to judge calls exactly as the bot does.
func Tools(cfg *config.Config, sec *secrets.Set, log zerolog.Logger) (*tools.Registry, error) {
	return buildTools(cfg, sec, nil, nil, log)
}

// Policy returns the policy gate of cfg's policy.rules and profiles over
// the tools of catalog, without standing allows (the bot adds its broker,
// and its profiles with their providers). The running bot and `bot policy
// test` / `bot policy explain` both build it here.
func Policy(cfg *config.Config, catalog core.ToolCatalog) (*core.PolicyGate, error) {
	rules, err := policyRules(cfg)
	if err != nil {
		return nil, err
	}
	profiles, err := profilePolicy(cfg)
	if err != nil {
		return nil, err
	}
	return &core.PolicyGate{Rules: rules, Catalog: catalog, Profiles: core.NewProfiles(profiles)}, nil
}

// policyRules converts policy.rules to the core's rules, numbered from 1.
func policyRules(cfg *config.Config) ([]core.Rule, error) {
	return rulesOf(cfg.Policy, "policy", "")
}

// rulesOf converts the rules of p, at key prefix, to the core's rules,
// numbered from 1; profile names the profile they belong to, if any.
func rulesOf(p config.Policy, prefix, profile string) ([]core.Rule, error) {
	rules := make([]core.Rule, 0, len(p.Rules))
	for i, r := range p.Rules {
		cr := core.Rule{Index: i + 1, Profile: profile, Tool: r.Tool, Decision: r.Verdict()}
		if r.Args != "" {
			re, err := regexp.Compile(r.Args)
			if err != nil {
				return nil, fmt.Errorf("%s.rules[%d].args: %w", prefix, i, err)
			}
			cr.Args = re
		}
		rules = append(rules, cr)
	}
	return rules, nil
}

// allowLists returns each gateway's allow list, as its section says (a
// gateway on the machine's own terminal lets its one local person talk),
// with the profiles' approvers on theirs: like hitl.approvers, they may
// talk to the bot, to approve.
func allowLists(cfg *config.Config) map[string][]string {
	out := make(map[string][]string)
	for _, name := range cfg.Gateways.Names() {
		out[name] = cfg.Gateways.Section(name).Allow()
	}
	for _, p := range cfg.Profiles {
		for _, id := range identities(p.Approvers) {
			g := id.Gateway()
			out[g] = append(slices.Clip(out[g]), string(id))
		}
	}
	return out
}

func identities(ids []string) []core.Identity {
	out := make([]core.Identity, len(ids))
	for i, id := range ids {
		out[i] = core.Identity(strings.TrimSpace(id))
	}
	return out
}

// people are hitl.people's groups of identities of one person.
func people(cfg *config.Config) [][]core.Identity {
	out := make([][]core.Identity, len(cfg.HITL.People))
	for i, ids := range cfg.HITL.People {
		out[i] = identities(ids)
	}
	return out
}

// notifyConversations parses hitl.notify.
func notifyConversations(cfg *config.Config) ([]core.Conversation, error) {
	notify := make([]core.Conversation, 0, len(cfg.HITL.Notify))
	for i, key := range cfg.HITL.Notify {
		c, err := core.ParseConversation(key)
		if err != nil {
			return nil, fmt.Errorf("hitl.notify[%d]: %w", i, err)
		}
		notify = append(notify, c)
	}
	return notify, nil
}

// buildBudget builds the daily caps over the store's usage, and the price
// table its Priced wrapper prices each provider's requests at.
func buildBudget(cfg *config.Config, usage budget.Usage) *budget.Budget {
	caps, prices := budgetLimits(cfg)
	return budget.New(usage, caps, prices)
}

// budgetLimits returns the budget's caps and the providers' prices, by
// name, as cfg sets them.
func budgetLimits(cfg *config.Config) (budget.Caps, budget.Prices) {
	prices := budget.Prices{}
	for _, p := range cfg.LLM.Providers {
		if p.Price != nil {
			prices[p.Name] = budget.Price{InputPerMTok: p.Price.InputPerMTok, OutputPerMTok: p.Price.OutputPerMTok}
		}
	}
	caps := budget.Caps{
		ConversationDailyTokens: cfg.Budget.ConversationDailyTokens,
		DailyTokens:             cfg.Budget.DailyTokens,
		DailyUSD:                cfg.Budget.DailyUSD,
	}
	return caps, prices
}

// brokerEngine is what the broker needs of the engine: it runs approved
// calls and answers outcomes through it, and has each approved call judged
// again by the gates in force on this instance before it runs.
type brokerEngine interface {
	core.Dispatcher
	hitl.Rejudger
}

// buildBroker builds the approval broker on the store; profiles add
// approvers to their conversations' requests.
func buildBroker(cfg *config.Config, d brokerEngine, st store.Store, instance string, fence *cluster.Fence, profiles hitl.ProfileApprovers, m *metrics.Registry, log zerolog.Logger) (*hitl.Broker, error) {
	notify, err := notifyConversations(cfg)
	if err != nil {
		return nil, err
	}
	// Shared by several instances (PostgreSQL): the broker records which
	// instance runs each approved call and interrupts only the runs of
	// instances gone; one process (SQLite) recovers as it always did.
	if sh, ok := st.(store.Sharer); !ok || !sh.Shared() {
		instance = ""
	}
	nudge, err := nudges(cfg)
	if err != nil {
		return nil, err
	}
	b, err := hitl.NewBroker(d, hitl.Options{
		Page:              webPage(cfg),
		Nudges:            nudge,
		Instance:          instance,
		Policy:            d,
		LeaseTTL:          cfg.Store.LeaseTTL.D(),
		TTL:               cfg.HITL.TTL.D(),
		Approvers:         identities(cfg.HITL.Approvers),
		People:            people(cfg),
		Notify:            notify,
		AllowSelfApproval: cfg.HITL.AllowSelfApproval,
		Store:             st,
		Audit:             stampAudit(st, instance),
		Standing:          st,
		Grants:            st,
		Profiles:          profiles,
		Workspace:         cfg.Tools.Workspace,
		Log:               log.With().Str("component", "hitl").Logger(),
		Metrics:           m,
		Fence:             brokerFence(fence),
	})
	if err != nil {
		return nil, fmt.Errorf("hitl: %w", err)
	}
	return b, nil
}

// ProviderSkipped returns why a configured provider is not used, or "" when
// it is. A provider without an api_key is used only when its base_url
// carries credentials (https://user:password@proxy/v1) or is on this
// machine or a private network (Ollama, llama.cpp, vLLM need no key); a
// hosted API without a key would only fail, so the default config.yaml,
// which names OpenAI with ${OPENAI_API_KEY}, runs the demo model until the
// key is set.
func ProviderSkipped(p config.Provider) string {
	if p.APIKey != "" {
		return ""
	}
	u, err := url.Parse(p.BaseURL)
	if err != nil {
		return "base_url does not parse"
	}
	if u.User != nil || localHost(u.Hostname()) {
		return ""
	}
	return "no api_key for " + u.Hostname()
}

// localHost reports whether host names this machine, a private network, or
// a bare service name (a container next door).
func localHost(host string) bool {
	if host == "localhost" || !strings.Contains(host, ".") || strings.HasSuffix(host, ".local") || strings.HasSuffix(host, ".internal") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast())
}
