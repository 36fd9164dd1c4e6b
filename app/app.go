// Package app builds a running gatehouse from its configuration: the store,
// the LLM provider, the tools, the engine with its gates, the approval
// broker and the gateways, wired explicitly in one place. cmd/bot and the
// end-to-end tests both use it.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/budget"
	"github.com/gatehouse-bot/gatehouse/checkpoint"
	"github.com/gatehouse-bot/gatehouse/cluster"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/core/tools/mcp"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/startup"
	"github.com/gatehouse-bot/gatehouse/pairing"
	"github.com/gatehouse-bot/gatehouse/schedule"
	"github.com/gatehouse-bot/gatehouse/skills"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
	"github.com/gatehouse-bot/gatehouse/webhooks"
)

// Options are what the App needs besides the configuration.
type Options struct {
	Config *config.Config
	// Stdin and Stdout are the bot's own terminal or pipes, for a gateway
	// that talks there.
	Stdin  io.Reader
	Stdout io.Writer
	// Interactive is true when Stdin is a terminal: a gateway on it then
	// shows a prompt, and the end of its input (Ctrl-D) ends Run even when
	// other gateways run.
	Interactive bool
	Log         zerolog.Logger
	// Secrets are every secret the bot holds (config and environment).
	Secrets *secrets.Set
	// Gateways are extra gateways to run besides the configured ones (tests).
	Gateways []gateways.Gateway
	// HTTPClient, when set, is used by the platform gateways (tests).
	HTTPClient *http.Client
	// Tune, when set, is handed a pointer to each platform gateway's
	// runtime settings before it is built, to adjust what has no
	// configuration key (pacing, poll timeout); tests use it.
	Tune func(settings any)
	// Now, when set, is the clock of the engine and of the store's usage
	// days (tests of the daily budgets); nil is time.Now.
	Now func() time.Time
	// Load, when set, reads the configuration again for a reload (SIGHUP,
	// POST /-/reload; see App.Reload); nil refuses reloads.
	Load func() (*config.Config, error)
	// SetLogLevel, when set, changes the level of Log on a reload.
	SetLogLevel func(level string)
	// Instance names this instance among those sharing the store (schedule
	// slots, leases, /status); "" is store.instance, and when that is ""
	// too, hostname-pid (InstanceName).
	Instance string
	// Version is the build's version, shown beside the instance.
	Version string
	// Grace, when set, is how long the turns in flight at shutdown may go
	// on before they are cancelled (core.Config.Grace); zero is the
	// engine's default, 10 s. Tests shorten it.
	Grace time.Duration
}

// App is a wired gatehouse, ready to Run.
type App struct {
	cfg      *config.Config
	log      zerolog.Logger
	store    store.Store
	engine   *core.Engine
	broker   *hitl.Broker
	tools    *tools.Registry
	mcp      *mcp.Manager // nil without mcp.servers
	gateways []gateways.Gateway
	ender    gateways.Gateway            // whose input can end for good (a gateways.InputEnder), or nil
	prepared map[string]gateways.Section // by name: sections whose Build's request is under way (prepareGateways)
	health   *health
	probe    *storeProbe    // the store's ping: /readyz, and the inbox on a shared store
	inbox    gateways.Inbox // what the gateways submit to (the engine, guarded on a shared store)
	metrics  *metrics.Registry
	routes   []route // extra handlers on http.listen
	sched    *schedule.Scheduler
	webhooks *webhooks.Server
	skills   *skills.Catalog // nil without skills.dirs
	auth     *core.Auth
	pairing  *pairing.Manager
	policy   *core.PolicyGate
	profiles *core.Profiles // the policy's, the engine's and the broker's
	// profileHTTP are the HTTP clients of the profiles' providers, by
	// provider name (buildProfiles).
	profileHTTP map[string]*http.Client
	budget      *budget.Budget
	// enabled names the gateways that run (enabledGateways), which a
	// reload's approvers are checked against: enabling one needs a restart.
	enabled map[string]bool
	// instance names this instance in the store (Options.Instance).
	instance string
	member   *cluster.Member  // its heartbeat and /status lines
	fence    *cluster.Fence   // stops its calls when it cannot renew; nil unless the store is shared
	journal  *cluster.Replies // the store's outbox, nil unless the store is shared
	durable  *cluster.Inbox   // the durable inbox; nil unless the store is shared

	reload reloader

	// interactive: stdin is a terminal, where Ctrl-D means quit.
	interactive bool

	// checkpoints is nil when tools.checkpoints.enabled is false; its
	// collection runs once the bot receives (collectCheckpoints).
	checkpoints *checkpoint.Manager
}

// New builds the App. It opens the store and constructs every component;
// platform gateways may contact their API here (to check a token).
// On error everything opened so far is closed.
func New(ctx context.Context, o Options) (*App, error) {
	a := &App{cfg: o.Config, log: o.Log, interactive: o.Interactive, metrics: metrics.New(), instance: InstanceName(cmp.Or(o.Instance, o.Config.Store.Instance)),
		reload: reloader{load: o.Load, setLogLevel: o.SetLogLevel, redact: o.Secrets.Redact}}
	if err := a.build(ctx, o); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// Run runs the engine, the broker, every gateway, the health server, the
// instance's heartbeat in the store and a daily prune of history past
// store.retention until ctx ends. When the
// only gateway is one whose input can end (the bot's own stdin), or that
// input is a terminal (Options.Interactive: Ctrl-D), the end of its input
// ends Run too, after the replies in flight are delivered. It returns an
// error, before anything runs, when http.listen cannot be bound, or one
// matching ErrInstanceInUse when another live process runs under this
// instance's name on the shared store.
func (a *App) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ln net.Listener
	if a.cfg.HTTP.Listen != "" {
		var err error
		if ln, err = listen(a.cfg.HTTP.Listen); err != nil {
			return err
		}
		defer ln.Close()
	}
	startup.Mark(ctx, "run: http.listen bound")
	// The name first: a second live process under it stops here, before
	// its recovery takes the first's runs for a dead instance's.
	if err := a.claimName(ctx); err != nil {
		return err
	}
	startup.Mark(ctx, "run: instance name claimed")
	// Before anything can claim an approval: runs cut by a crash become
	// interrupted and are reported, never re-run.
	if _, err := a.broker.Recover(ctx); err != nil {
		return err
	}
	startup.Mark(ctx, "run: approvals recovered")
	g, gctx := newGroup(ctx)
	// The heartbeat outlives the broker's Run: the approved calls still
	// running in their grace period at shutdown are this instance's, and
	// another instance takes them for a dead one's only once the
	// heartbeat has stopped.
	hctx, stopHeartbeat := context.WithCancel(context.WithoutCancel(gctx))
	defer stopHeartbeat()
	recv := startup.NewReceiving()
	gctx = startup.WithReceiving(gctx, recv)
	a.runInside(g, gctx, hctx, stopHeartbeat, recv)
	a.runEdges(g, gctx, ln, cancel)
	if !a.anyReceiverReports() {
		recv.Open()
	}
	a.health.setReady()
	startup.Mark(ctx, "run: everything started")
	a.log.Info().Int("gateways", len(a.gateways)).Str("instance", a.instance).Msg("gatehouse running")
	err := g.Wait()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// runInside starts in g what runs behind the gateways: the engine, the
// broker (whose end stops the heartbeat), the scheduler, the heartbeat and
// the fence (under hctx), the replies of instances gone, pairing, the
// durable inbox, MCP servers and the prunes: the first at once after the
// first receive (recv), then daily.
func (a *App) runInside(g *group, gctx, hctx context.Context, stopHeartbeat context.CancelFunc, recv *startup.Receiving) {
	// drained is done once the engine and the broker have returned: the
	// turns and approved actions in flight at shutdown have finished or
	// been cut at the end of their grace. MCP sessions stay up until then.
	var drained sync.WaitGroup
	drained.Add(2)
	g.Go(func() error {
		defer drained.Done()
		return a.engine.Run(gctx)
	})
	g.Go(func() error {
		defer drained.Done()
		defer stopHeartbeat()
		return a.broker.Run(gctx)
	})
	// What can wait starts once the bot receives (recv): the scheduler,
	// pairing's sweep, the skills' watch, MCP servers, the checkpoints'
	// collection, the first prune.
	later := func(run func() error) func() error {
		return func() error {
			if !recv.Wait(gctx) {
				return nil
			}
			return run()
		}
	}
	g.Go(later(func() error { return a.sched.Run(gctx, a.inbox) }))
	g.Go(func() error { return a.member.Run(hctx, a.heartbeatInterval()) })
	g.Go(func() error { return a.fence.Run(hctx) })
	if a.journal != nil {
		ttl := a.cfg.Store.LeaseTTL.D()
		g.Go(func() error { return a.journal.Resume(gctx, a.engine, ttl/3, ttl, a.member.Started(), a.log) })
	}
	g.Go(later(func() error { return a.pairing.Run(gctx) }))
	if a.skills != nil {
		g.Go(later(func() error { return a.watchSkills(gctx) }))
	}
	if w, ok := a.store.(store.PairingWatcher); ok && a.sharedStore() {
		g.Go(func() error { return watchPairings(gctx, w, a.pairing, a.log) })
	}
	if a.durable != nil {
		g.Go(func() error { return a.durable.Run(gctx, a.engine) })
	}
	if a.mcp != nil {
		a.runMCP(g, gctx, later, &drained)
	}
	if a.checkpoints != nil {
		g.Go(func() error { return a.collectCheckpointsAfter(gctx, recv) })
	}
	g.Go(func() error { return a.pruneAfter(gctx, recv) })
}

// runMCP starts in g the MCP servers, once the bot receives (later): in
// parallel with the bot, which answers meanwhile, each server's tools
// appearing when it is ready. Their sessions end once drained is done, not
// with gctx: a call in flight at shutdown is a turn's (or an approved
// action's) still in its grace period, and it gets its result. The manager's
// Run returns once every child has exited.
func (a *App) runMCP(g *group, gctx context.Context, later func(func() error) func() error, drained *sync.WaitGroup) {
	mctx, stop := context.WithCancel(context.WithoutCancel(gctx))
	g.Go(func() error {
		drained.Wait()
		stop()
		return nil
	})
	g.Go(later(func() error { return a.mcp.Run(mctx) }))
}

// runEdges starts in g the health server on ln (when there is one) and
// every gateway, and, where the input of a.ender can end the bot, the
// watch for that end, which calls stop.
func (a *App) runEdges(g *group, gctx context.Context, ln net.Listener, stop context.CancelFunc) {
	if ln != nil {
		g.Go(func() error { return a.health.serve(gctx, ln, a.log) })
	}
	for _, gw := range a.gateways {
		g.Go(func() error {
			err := gw.Run(gctx, a.inbox)
			if err != nil && gw == a.ender && len(a.gateways) > 1 {
				// A broken stdin (nohup, a closed terminal) ends the gateway
				// on it, not the gateways that serve other people.
				a.log.Warn().Err(err).Msgf("%s input failed; it is closed, the other gateways run on", gw.Name())
				return nil
			}
			if err != nil {
				return fmt.Errorf("gateway %s: %w", gw.Name(), err)
			}
			return nil
		})
	}
	// Ctrl-D on a terminal quits, as the terminal banner says, whatever
	// else runs; the end of piped input (a service's closed or empty stdin)
	// ends that gateway alone while other gateways serve other people.
	if a.ender != nil && (len(a.gateways) == 1 || a.interactive) {
		g.Go(func() error { return a.exitAfterInput(gctx, stop) })
	}
}

// exitAfterInput ends the App once the input of a.ender has ended and
// everything it caused is answered (see settle).
func (a *App) exitAfterInput(ctx context.Context, stop context.CancelFunc) error {
	select {
	case <-ctx.Done():
		return nil
	case <-a.ender.(gateways.InputEnder).EndOfInput():
	}
	if err := a.settle(ctx); err != nil {
		return nil
	}
	a.log.Info().Msgf("%s input ended; shutting down", a.ender.Name())
	stop()
	return nil
}

// settle waits until the engine is idle and the broker has no approved
// action running and no outcome left to submit. An approved action runs in
// the broker after the /approve turn has ended, and its outcome becomes a
// new turn whose reply must still go out; so it waits in rounds until one
// passes in which the engine processed no signal. Approvals still pending
// (waiting for a person) do not hold it.
func (a *App) settle(ctx context.Context) error {
	for {
		seen := a.engine.Stats().Signals
		for _, wait := range []func(context.Context) error{a.engine.WaitIdle, a.broker.WaitIdle, a.engine.WaitIdle} {
			if err := wait(ctx); err != nil {
				return err
			}
		}
		if a.engine.Stats().Signals == seen {
			return nil
		}
	}
}

// Close releases the store.
func (a *App) Close() error {
	if a.store == nil {
		return nil
	}
	err := a.store.Close()
	a.store = nil
	return err
}

// toolAudit writes the engine's rule-allowed tool runs to the audit log.
type toolAudit struct {
	audit hitl.Audit
	log   zerolog.Logger
}

func (t toolAudit) AuditTool(ctx context.Context, a core.Action, rule string, res core.Result) {
	outcome := "executed"
	if res.Failed {
		outcome = "failed"
	}
	e := record.AuditEntry{At: time.Now(), Conv: a.Conv.Key(), Tool: a.Call.Name, Args: a.Call.Args,
		RequestedBy: a.From, Outcome: outcome, Detail: "allowed by " + rule}
	if err := t.audit.AppendAudit(ctx, e); err != nil {
		t.log.Error().Err(err).Str("conv", a.Conv.Key()).Msg("audit append")
	}
}

// statusReporters are the parts that add lines to /status: the instances
// sharing the store and the leases held, and the MCP servers, when there
// are any.
func statusReporters(c *cluster.Member, m *mcp.Manager) []core.StatusReporter {
	if m == nil {
		return []core.StatusReporter{c}
	}
	return []core.StatusReporter{c, m}
}
