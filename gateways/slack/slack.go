// Package slack is the Slack gateway. It receives over Socket Mode (the
// default: github.com/slack-go/slack/socketmode, unmodified) or as the
// Events API's signed HTTP requests, normalises DMs and mentions into
// signals, renders replies as Slack mrkdwn and sends them through the
// shared delivery layer (gateways.Outbox: split, ordered, paced, retried),
// turns approval requests into Block Kit buttons and updates them once
// resolved, and hands the /approve, /deny and /pending slash commands to
// the broker. The tokens and the signing secret never appear in a log line
// or an error.
package slack

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
	"github.com/slack-go/slack"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// Name is the gateway's name, the first part of its conversation keys and
// identities.
const Name = "slack"

var (
	_ gateways.Gateway          = (*Gateway)(nil)
	_ gateways.DeliveryReporter = (*Gateway)(nil)
	_ core.ApprovalPrompter     = (*Gateway)(nil)
	_ core.ApprovalUpdater      = (*Gateway)(nil)
)

// Gateway is the Slack adapter. It is safe for concurrent use; Run is
// called once.
type Gateway struct {
	cfg       Config
	log       zerolog.Logger
	api       *slack.Client
	botUser   string   // the bot's member id (auth.test user_id)
	botID     string   // the bot's bot_id
	files     *url.URL // the only origin files are fetched from (with the bot token)
	secrets   *secrets.Set
	approvals gateways.Approvals
	out       *gateways.Outbox
	// delivery and reconnected record this gateway's metrics.
	delivery    metrics.Delivery
	shared      *gateways.Shared // nil: this instance paces and sends alone
	team        string           // the workspace, as auth.test reported it
	reconnected func()
	prompts     *gateways.PromptBook[promptRef]
	threads     gateways.Memory    // channel:thread_ts the bot is part of, in threadScope
	auth        gateways.Admission // nil: every sender is allowed
	events      *recentSet         // event ids handled (Events API retries)
	messages    *recentSet         // channel:ts of the messages handled
	slashes     *slashBook         // slash commands awaiting their answer
	listener    net.Listener
	run         atomic.Pointer[runState]
	wg          sync.WaitGroup // presses and background replies started by Run

	connects atomic.Uint64 // Socket Mode connections made
	up       atomic.Bool   // Socket Mode: hello received, not disconnected since; events: serving
	refusing atomic.Bool   // events are left unacknowledged: the store does not answer (refuse)
}

// runState is what a running gateway hands to its background work.
type runState struct {
	ctx   context.Context
	inbox gateways.Inbox
	queue chan inbound // signals to submit, in arrival order
}

// New checks the configuration, connects (auth.test) and returns the
// gateway. In events mode with Listen set it also binds the listener.
func New(ctx context.Context, cfg Config, d Deps) (*Gateway, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &Gateway{
		cfg: cfg,
		log: d.Log.With().Str("gateway", Name).Logger(),
		secrets: secrets.New(cfg.BotToken, cfg.AppToken, cfg.SigningSecret,
			url.QueryEscape(cfg.BotToken), url.QueryEscape(cfg.AppToken)),
		approvals: d.Approvals,
		prompts:   new(gateways.PromptBook[promptRef]),
		threads:   d.Memory,
		auth:      d.Auth,
		events:    newRecentSet(4096),
		messages:  newRecentSet(4096),
		slashes:   newSlashBook(),

		delivery:    d.Metrics.Delivery(Name),
		shared:      d.Shared,
		reconnected: d.Metrics.Reconnects(Name),
	}
	if g.files, err = filesOrigin(cfg.APIURL); err != nil {
		return nil, err
	}
	opts := []slack.Option{slack.OptionAPIURL(cfg.APIURL), slack.OptionHTTPClient(cfg.HTTPClient), slack.OptionDebug(false)}
	if cfg.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.AppToken))
	}
	if g.threads == nil {
		g.threads = &memThreads{set: newRecentSet(cfg.Threads)}
	}
	g.api = slack.New(cfg.BotToken, opts...)
	rctx, cancel := context.WithTimeout(ctx, cfg.SendTimeout)
	defer cancel()
	who, err := g.api.AuthTestContext(rctx)
	if err != nil {
		return nil, fmt.Errorf("slack: connect (auth.test): %w", g.scrub(err))
	}
	g.botUser, g.botID, g.team = who.UserID, who.BotID, who.TeamID
	if g.out, err = g.newOutbox(); err != nil { // after auth.test: the sender is the bot's
		return nil, err
	}
	g.log.Info().Str("bot_user", who.UserID).Str("team", who.TeamID).Str("mode", cfg.Mode).Msg("connected")
	if cfg.Mode == ModeEvents && cfg.Listen != "" {
		if g.listener, err = net.Listen("tcp", cfg.Listen); err != nil {
			return nil, fmt.Errorf("slack: listen %s: %w", cfg.Listen, err)
		}
	}
	return g, nil
}

// Name returns "slack".
func (g *Gateway) Name() string { return Name }

// BotUserID returns the bot's member id as auth.test reported it.
func (g *Gateway) BotUserID() string { return g.botUser }

// Reconnects counts the Socket Mode connections made after the first one.
func (g *Gateway) Reconnects() uint64 {
	if n := g.connects.Load(); n > 1 {
		return n - 1
	}
	return 0
}

// Run receives until ctx ends, over Socket Mode or by serving the Events
// API, and submits the signals to inbox in arrival order. It returns nil
// on cancellation.
func (g *Gateway) Run(ctx context.Context, inbox gateways.Inbox) error {
	defer g.wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // before the wait: the background work ends with Run
	rs := &runState{ctx: ctx, inbox: inbox, queue: make(chan inbound, inboundQueue)}
	g.run.Store(rs)
	g.goBackground(func() { g.submitLoop(rs) })
	if g.cfg.Mode == ModeEvents {
		return g.runEvents(ctx)
	}
	return g.runSocket(ctx)
}

// goBackground runs f in a goroutine Run waits for.
func (g *Gateway) goBackground(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
}
