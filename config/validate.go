package config

import (
	"fmt"
	"maps"
	"math"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// fillDerived sets defaults that depend on other values.
func (c *Config) fillDerived() {
	for i := range c.LLM.Providers {
		p := &c.LLM.Providers[i]
		if p.Name == "" {
			if u, err := url.Parse(p.BaseURL); err == nil {
				p.Name = u.Host
			}
		}
		if p.Model == "" {
			p.Model = defaultModel
		}
		if p.Timeout == 0 {
			p.Timeout = c.LLM.Timeout
		}
	}
	if t := &c.LLM.Transcribe; t.Provider != "" {
		if t.Model == "" {
			t.Model = defaultTranscribeModel
		}
		if t.Timeout == 0 {
			t.Timeout = c.LLM.Timeout
		}
	}
}

// validate checks every value and compiles the policy's regexps. It returns
// the first *Error found, without its line.
func (c *Config) validate() error {
	ch := &checker{gateways: c.Gateways.Names()}
	c.LLM.check(ch)
	c.Engine.check(ch)
	c.Gateways.check(ch, c.HTTP.Listen)
	c.HITL.check(ch)
	c.Policy.check(ch)
	c.Tools.check(ch)
	c.MCP.check(ch)
	c.Store.check(ch)
	c.checkDatabaseBlobs(ch)
	c.HTTP.check(ch)
	c.Log.check(ch)
	checkSchedules(ch, c.Schedules)
	checkWebhooks(ch, c.Webhooks, c.HTTP.Listen)
	c.Budget.check(ch, c.LLM.Providers)
	checkProfiles(ch, c.Profiles, c.LLM.Providers)
	c.Attachments.check(ch)
	c.Skills.check(ch)
	c.LLM.Transcribe.check(ch, c.LLM.Providers)
	if err := ch.err(); err != nil {
		return err
	}
	return nil
}

func (l *LLM) check(ch *checker) {
	ch.intRange("llm.max_steps", l.MaxSteps, 1, 100)
	ch.intRange("llm.max_tool_calls", l.MaxToolCalls, 1, 256)
	ch.positive("llm.timeout", l.Timeout)
	ch.intRange("llm.history", l.History, 1, 10000)
	names := map[string]int{}
	for i, p := range l.Providers {
		key := fmt.Sprintf("llm.providers[%d]", i)
		if ch.required(key+".base_url", p.BaseURL) {
			ch.url(key+".base_url", p.BaseURL, "http", "https")
		}
		if first, dup := names[p.Name]; dup {
			ch.fail(key+".name", "duplicate provider name %s (also llm.providers[%d]); set distinct names", quote(p.Name), first)
		}
		names[p.Name] = i
		ch.positive(key+".timeout", p.Timeout)
		if p.Price != nil {
			notNegative(ch, key+".price.input_per_mtok", p.Price.InputPerMTok)
			notNegative(ch, key+".price.output_per_mtok", p.Price.OutputPerMTok)
		}
	}
}

func (b *Budget) check(ch *checker, providers []Provider) {
	notNegative(ch, "budget.conversation_daily_tokens", float64(b.ConversationDailyTokens))
	notNegative(ch, "budget.daily_tokens", float64(b.DailyTokens))
	notNegative(ch, "budget.daily_usd", b.DailyUSD)
	if b.DailyUSD <= 0 {
		return
	}
	if len(providers) == 0 {
		ch.fail("budget.daily_usd", "needs llm.providers with a price each (price: {input_per_mtok, output_per_mtok}); the offline demo model costs nothing")
	}
	// Each request costs its provider's price: a provider without one
	// would spend unseen by the cap, so every provider needs a price (an
	// explicit 0 for a free one).
	for i, p := range providers {
		if p.Price == nil {
			ch.fail("budget.daily_usd", "needs a price on every provider: set llm.providers[%d].price: {input_per_mtok, output_per_mtok} (provider %s; 0 for a free one)", i, quote(p.Name))
			return
		}
	}
}

// notNegative checks a number that may be zero (unlimited, free) but not
// negative; NaN is refused too.
func notNegative(ch *checker, key string, v float64) {
	if !(v >= 0) || math.IsInf(v, 0) {
		ch.fail(key, "must be 0 or more, got %v", v)
	}
}

func (e *Engine) check(ch *checker) {
	ch.intRange("engine.concurrency", e.Concurrency, 1, 1024)
	ch.intRange("engine.queue", e.Queue, 1, 65536)
	ch.intRange("engine.max_message", e.MaxMessage, 1, 1<<20)
}

func (h *HITL) check(ch *checker) {
	ch.positive("hitl.ttl", h.TTL)
	if len(h.Approvers) == 0 {
		// Deny by default: with nobody to approve, every held action would
		// be a dead end, so refuse the configuration now, not in the broker.
		ch.fail("hitl.approvers", "at least one approver identity gateway:id is required (gateway %s)", orList(ch.gateways))
	}
	for i, a := range h.Approvers {
		if strings.HasPrefix(strings.TrimSpace(a), "schedule:") {
			ch.fail(fmt.Sprintf("hitl.approvers[%d]", i), "%s: a schedule is never an approver", quote(a))
			continue
		}
		ch.identity(fmt.Sprintf("hitl.approvers[%d]", i), a)
	}
	for i, n := range h.Notify {
		ch.conversation(fmt.Sprintf("hitl.notify[%d]", i), n)
	}
	h.checkPeople(ch)
	h.checkEscalate(ch)
}

// checkEscalate checks hitl.remind_after and hitl.escalate: within
// hitl.ttl (a nudge at or after the expiry would never go out), the
// steps in order, each asking somebody.
func (h *HITL) checkEscalate(ch *checker) {
	if h.RemindAfter < 0 || (h.RemindAfter > 0 && h.RemindAfter >= h.TTL) {
		ch.fail("hitl.remind_after", "must be 0 (never) or less than hitl.ttl (%s), got %s", h.TTL, h.RemindAfter)
	}
	var prev Duration
	for i, e := range h.Escalate {
		key := fmt.Sprintf("hitl.escalate[%d]", i)
		switch {
		case e.After <= 0:
			ch.fail(key+".after", "must be positive, got %s", e.After)
		case e.After >= h.TTL:
			ch.fail(key+".after", "must be less than hitl.ttl (%s), got %s: the request would expire first", h.TTL, e.After)
		case e.After <= prev:
			ch.fail(key+".after", "must be later than hitl.escalate[%d].after (%s), got %s: the steps are taken in order", i-1, prev, e.After)
		}
		prev = e.After
		if len(e.Approvers) == 0 && len(e.Notify) == 0 {
			ch.fail(key, "asks nobody: list approvers (identities gateway:id) or notify (conversations gateway:chat[:thread])")
		}
		for j, a := range e.Approvers {
			k := fmt.Sprintf("%s.approvers[%d]", key, j)
			if strings.HasPrefix(strings.TrimSpace(a), "schedule:") {
				ch.fail(k, "%s: a schedule is never an approver", quote(a))
				continue
			}
			ch.identity(k, a)
		}
		for j, n := range e.Notify {
			ch.conversation(fmt.Sprintf("%s.notify[%d]", key, j), n)
		}
	}
}

// checkPeople checks hitl.people: groups of well-formed identities, each
// identity in one group only.
func (h *HITL) checkPeople(ch *checker) {
	group := make(map[string]int) // identity → the group it is in
	for i, ids := range h.People {
		if len(ids) == 0 {
			ch.fail(fmt.Sprintf("hitl.people[%d]", i), "an empty group: list the identities gateway:id of one person")
		}
		for j, id := range ids {
			key := fmt.Sprintf("hitl.people[%d][%d]", i, j)
			if strings.HasPrefix(strings.TrimSpace(id), "schedule:") {
				ch.fail(key, "%s: a schedule is no person", quote(id))
				continue
			}
			ch.identity(key, id)
			if g, dup := group[id]; dup {
				ch.fail(key, "%s is already in hitl.people[%d]: an identity belongs to one person", quote(id), g)
				continue
			}
			group[id] = i
		}
	}
}

func (p *Policy) check(ch *checker) { p.checkAt(ch, "policy") }

// checkAt checks the rules of the policy at key prefix: policy, or a
// profile's profiles[N].policy.
func (p *Policy) checkAt(ch *checker, prefix string) {
	for i := range p.Rules {
		r := &p.Rules[i]
		key := fmt.Sprintf("%s.rules[%d]", prefix, i)
		if ch.required(key+".tool", r.Tool) {
			if _, err := path.Match(r.Tool, ""); err != nil {
				ch.fail(key+".tool", "bad glob %s", quote(r.Tool))
			}
		}
		if r.Args != "" {
			re, err := regexp.Compile(r.Args)
			if err != nil {
				ch.fail(key+".args", "bad regexp: %v", err)
			}
			r.args = re
		}
		if ch.required(key+".decision", r.Decision) {
			ch.oneOf(key+".decision", r.Decision, DecisionAllow, DecisionDeny, DecisionApprove)
		}
	}
}

func (t *Tools) check(ch *checker) {
	ch.required("tools.workspace", t.Workspace)
	ch.intRange("tools.max_output", t.MaxOutput, 1, 16<<20)
	for _, name := range slices.Sorted(maps.Keys(t.Timeouts)) {
		key := "tools.timeouts." + name
		if name == "" {
			ch.fail(key, "empty tool name")
		}
		ch.positive(key, t.Timeouts[name])
	}
	ch.intRange("tools.http.max_bytes", t.HTTP.MaxBytes, 1, 64<<20)
	if t.Sandbox != "" {
		ch.oneOf("tools.sandbox", t.Sandbox, "auto", "workspace-write", "off")
	}
	if c := t.Checkpoints; c.Enabled {
		if c.MaxFile < 1 {
			ch.fail("tools.checkpoints.max_file", "must be at least 1 byte")
		}
		if c.MaxTotal < c.MaxFile {
			ch.fail("tools.checkpoints.max_total", "%s is less than tools.checkpoints.max_file (%s)", c.MaxTotal, c.MaxFile)
		}
		ch.intRange("tools.checkpoints.keep", c.Keep, 1, 10000)
	}
}

// mcpName reports whether name may name an MCP server: no underscore, so
// that "mcp__<server>__<tool>" splits one way only
// (core/tools/mcp.CheckName).
func mcpName(name string) bool { return textutil.Shape(name, 1, 24, textutil.Alnum+"-") }

func (m *MCP) check(ch *checker) {
	names := map[string]int{}
	for i, s := range m.Servers {
		key := fmt.Sprintf("mcp.servers[%d]", i)
		if !mcpName(s.Name) {
			ch.fail(key+".name", "want letters, digits and dashes, 1 to 24 of them, got %s", quote(s.Name))
		}
		if first, dup := names[s.Name]; dup {
			ch.fail(key+".name", "duplicate server name %s (also mcp.servers[%d])", quote(s.Name), first)
		}
		names[s.Name] = i
		switch {
		case (s.Command == "") == (s.URL == ""):
			ch.fail(key, "set command (a stdio server) or url (Streamable HTTP), not both")
		case s.URL != "":
			ch.url(key+".url", s.URL, "http", "https")
			if len(s.Args) > 0 || len(s.Env) > 0 || s.Cwd != "" {
				ch.fail(key, "args, env and cwd are for a stdio server (command), not url")
			}
		default:
			if len(s.Headers) > 0 {
				ch.fail(key+".headers", "headers are for a Streamable HTTP server (url), not command")
			}
		}
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				ch.fail(key+".env", "bad variable name %s", quote(k))
			}
		}
		if s.StartTimeout < 0 {
			ch.fail(key+".start_timeout", "must not be negative, got %s", s.StartTimeout)
		}
		if s.Timeout < 0 {
			ch.fail(key+".timeout", "must not be negative, got %s", s.Timeout)
		}
	}
}

func (s *Store) check(ch *checker) {
	ch.oneOf("store.driver", s.Driver, "sqlite", "postgres")
	ch.required("store.dsn", s.DSN.Value())
	if s.Retention < 0 {
		ch.fail("store.retention", "must not be negative, got %s", s.Retention)
	}
	if s.LeaseTTL <= 0 {
		ch.fail("store.lease_ttl", "must be positive, got %s", s.LeaseTTL)
	}
	if len(s.Instance) > maxInstance || strings.IndexFunc(s.Instance, func(r rune) bool { return !unicode.IsGraphic(r) || unicode.IsSpace(r) }) >= 0 {
		ch.fail("store.instance", "want at most %d printable characters without spaces", maxInstance)
	}
}

// maxInstance bounds store.instance, a name shown in logs and /status.
const maxInstance = 64

func (h *HTTP) check(ch *checker) {
	if h.Listen != "" {
		ch.listen("http.listen", h.Listen)
	}
}

func (l *Log) check(ch *checker) {
	ch.oneOf("log.level", l.Level, "debug", "info", "warn", "error")
	ch.oneOf("log.format", l.Format, "auto", "console", "json")
}
