package app

import (
	"context"
	"net/http"
	"time"

	"github.com/gatehouse-bot/gatehouse/app/storetable"
	"github.com/gatehouse-bot/gatehouse/cluster"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/internal/startup"
)

// build constructs the App's parts in dependency order: the store and
// this instance's place among the others, the tools and the model, the
// people (allow lists, pairing, schedules), the engine, approvals, and
// the edges (gateways, health).
func (a *App) build(ctx context.Context, o Options) error {
	// The gateways' requests to their platforms (prepareGateways) end
	// with the build: Build waited for them, or the build failed.
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := a.buildStore(ctx, pctx, o); err != nil {
		return err
	}
	p, err := a.buildTooling(ctx, o)
	if err != nil {
		return err
	}
	startup.Mark(ctx, "build: tooling (checkpoints, tools, MCP, providers, attachments, policy, profiles)")
	if err := a.buildPeople(ctx, o); err != nil {
		return err
	}
	startup.Mark(ctx, "build: people (allow lists, pairing, scheduler)")
	if err := a.buildEngine(o, p); err != nil {
		return err
	}
	startup.Mark(ctx, "build: engine")
	if err := a.buildApprovals(o, p.policy); err != nil {
		return err
	}
	startup.Mark(ctx, "build: approvals")
	if err := a.buildEdges(ctx, o); err != nil {
		return err
	}
	startup.Mark(ctx, "build: edges (gateways, health)")
	return nil
}

// engineParts are what buildTooling makes for the engine.
type engineParts struct {
	actuators   *core.Actuators
	undo        core.Undoer
	provider    llm.Provider
	attachments core.AttachmentReceiver
	policy      *core.PolicyGate
}

// buildStore checks the configuration, starts the gateways' requests to
// their platforms (under pctx), opens the store, and makes this instance's
// view of the others (heartbeat, fingerprint, fence).
func (a *App) buildStore(ctx, pctx context.Context, o Options) (err error) {
	cfg := o.Config
	if err := checkConfig(cfg, o); err != nil {
		return err
	}
	if a.enabled, err = enabledGateways(cfg, o.Gateways); err != nil {
		return err
	}
	if err := checkApprovers(cfg, a.enabled); err != nil {
		return err
	}
	startup.Mark(ctx, "build: configuration checks")
	a.prepareGateways(pctx, o)
	if a.store, err = storetable.Open(ctx, cfg, o.Now); err != nil {
		return err
	}
	startup.Mark(ctx, "build: store open and schema")
	a.member = cluster.NewMember(a.store, a.instance, o.Version, time.Now(), o.Log)
	if d, err := storetable.Lookup(cfg.Store.Driver); err == nil {
		a.member.UseStore(d.Name, d.SchemaVersion)
	}
	if err := a.useFingerprint(cfg, o.Secrets.Redact); err != nil {
		return err
	}
	a.useFence()
	startup.Mark(ctx, "build: instance (member, fingerprint, fence)")
	return nil
}

// buildTooling makes the checkpoints, the tools and MCP servers, the
// budget, the providers, the attachments' receiver and the policy.
func (a *App) buildTooling(ctx context.Context, o Options) (p engineParts, err error) {
	cfg := o.Config
	cp, err := buildCheckpoints(ctx, cfg, a.store, a.instance, a.fence, o.Now, o.Log)
	if err != nil {
		return p, err
	}
	var hook tools.Checkpointer
	if cp != nil {
		hook, p.undo, a.checkpoints = cp, cp, cp
	}
	// The Engine's actuators, made first: send_file finds its gateway there.
	p.actuators = &core.Actuators{}
	if a.tools, err = buildTools(cfg, o.Secrets, hook, p.actuators, o.Log); err != nil {
		return p, err
	}
	if a.mcp, err = buildMCP(cfg, a.tools, o.Secrets, o.Log); err != nil {
		return p, err
	}
	a.budget = buildBudget(cfg, a.store)
	provider, media, err := buildProviders(cfg, o.Log, a.metrics, a.budget)
	if err != nil {
		return p, err
	}
	p.provider = provider
	if p.attachments, err = buildAttachments(cfg, media, stampAudit(a.store, a.instance), a.store, o.Now, o.Log); err != nil {
		return p, err
	}
	if p.policy, err = Policy(cfg, a.tools); err != nil {
		return p, err
	}
	a.policy = p.policy
	a.profileHTTP = map[string]*http.Client{}
	profiles, err := buildProfiles(cfg, cfg.LLM.Providers, a.profileHTTP, o.Log, a.metrics, a.budget)
	if err != nil {
		return p, err
	}
	a.profiles = core.NewProfiles(profiles)
	p.policy.Profiles = a.profiles
	return p, a.buildSkills(cfg, o.Log, o.Now)
}

// buildPeople makes who may talk to the bot (allow lists, approvers,
// pairing) and the scheduler.
func (a *App) buildPeople(ctx context.Context, o Options) (err error) {
	cfg := o.Config
	a.auth = core.NewAuth(allowLists(cfg), identities(cfg.HITL.Approvers))
	if a.pairing, err = buildPairing(ctx, a.store, stampAudit(a.store, a.instance), o.Now, o.Log); err != nil {
		return err
	}
	a.auth.SetPairing(a.pairing, PairingGateways(cfg))
	a.sched, err = buildScheduler(cfg, a.store, a.runLeaser(), a.instance, o.Log)
	return err
}

// buildEngine makes the engine from the parts, with the durable inbox on
// a shared store.
func (a *App) buildEngine(o Options, p engineParts) error {
	cfg := o.Config
	notify, err := notifyConversations(cfg)
	if err != nil {
		return err
	}
	journal, err := a.buildInbox()
	if err != nil {
		return err
	}
	a.engine, err = core.NewEngine(core.Config{
		Provider:     p.provider,
		Tools:        a.tools,
		Actuators:    p.actuators,
		Gates:        append([]core.Gate{core.SecretGate{Secrets: o.Secrets}, p.policy}, a.skillGates()...),
		Skills:       a.skillLister(),
		Auth:         a.auth,
		History:      a.store,
		Usage:        a.store,
		Budget:       a.budget,
		BudgetNotify: notify,
		Profiles:     a.profiles,
		ToolAudit:    toolAudit{audit: stampAudit(a.store, a.instance), log: o.Log},
		Schedules:    a.sched,
		Status:       append(statusReporters(a.member, a.mcp), webhookStatus{a}),
		Undo:         p.undo,
		Attachments:  p.attachments,
		Journal:      journal,
		Redact:       o.Secrets.Redact,
		SystemPrompt: cfg.LLM.SystemPrompt,
		Model:        modelName(cfg),
		MaxSteps:     cfg.LLM.MaxSteps,
		MaxToolCalls: cfg.LLM.MaxToolCalls,
		MaxMessage:   cfg.Engine.MaxMessage,
		Concurrency:  cfg.Engine.Concurrency,
		QueueSize:    cfg.Engine.Queue,
		Grace:        o.Grace,
		Log:          o.Log,
		Now:          o.Now,
		Metrics:      a.metrics,
	})
	if err != nil {
		return err
	}
	a.metrics.QueueDepthFunc(a.engine.QueueDepth)
	return nil
}

// buildApprovals makes the broker and hands it to the engine, the policy
// (standing allows) and the scheduler, and registers the tool actuator.
func (a *App) buildApprovals(o Options, policy *core.PolicyGate) (err error) {
	if a.broker, err = buildBroker(o.Config, a.brokerDispatcher(), a.store, a.instance, a.fence, a.profiles, a.metrics, o.Log); err != nil {
		return err
	}
	policy.Standing = a.broker
	a.engine.UseHITL(a.broker, a.broker)
	a.sched.UseTracker(a.broker)
	return a.engine.Register(core.ToolActuator, a.toolActuator())
}

// buildEdges makes the gateways and the health server, and what the
// gateways submit to.
func (a *App) buildEdges(ctx context.Context, o Options) error {
	cfg := o.Config
	if err := a.buildGateways(ctx, o); err != nil {
		return err
	}
	if err := a.checkScheduleGateways(cfg); err != nil {
		return err
	}
	if err := a.mountWebhooks(cfg); err != nil {
		return err
	}
	if err := a.mountWeb(cfg); err != nil {
		return err
	}
	a.inboxGateways()
	a.health = newHealth(a.metrics, a.store, a.routes, a.gateways)
	a.probe = newStoreProbe(a.store, o.Log)
	a.health.probe = a.probe
	a.inbox = a.gatewayInbox()
	a.health.redact = o.Secrets.Redact
	if cfg.HTTP.Reload {
		a.health.reload = func(ctx context.Context) error { return a.ReloadBy(ctx, ReloadByHTTP) }
	}
	a.metrics.SetReload(true, time.Now()) // the start-up load, as Prometheus counts it
	a.metrics.SetInstance(a.instance, o.Version, a.sharedStore())
	return nil
}
