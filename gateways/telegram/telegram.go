// Package telegram is the Telegram gateway: it receives updates (long
// polling with its own loop, or a webhook), normalises them into signals,
// renders replies as Telegram HTML and sends them through the shared
// delivery layer (gateways.Outbox: split, ordered, paced, retried), and
// turns approval requests into inline buttons. It uses the unmodified
// github.com/go-telegram-bot-api/telegram-bot-api/v5 client pointed at
// Config.APIURL. The bot token never appears in a log line or an error.
package telegram

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/startup"
)

// Name is the gateway's name, the first part of its conversation keys and
// identities.
const Name = "telegram"

var (
	_ gateways.Gateway          = (*Gateway)(nil)
	_ core.Typer                = (*Gateway)(nil)
	_ core.ApprovalPrompter     = (*Gateway)(nil)
	_ core.ApprovalUpdater      = (*Gateway)(nil)
	_ gateways.DeliveryReporter = (*Gateway)(nil)
)

// Gateway is the Telegram adapter. It is safe for concurrent use; Run is
// called once.
type Gateway struct {
	cfg       Config
	log       zerolog.Logger
	bot       *tgbotapi.BotAPI // Self is the bot; Client is replaced per call
	secrets   *secrets.Set
	cursors   gateways.Cursors
	parking   gateways.Parking
	approvals gateways.Approvals
	out       *gateways.Outbox // splits, orders, paces, retries, reports
	prompts   *gateways.PromptBook[promptRef]
	seen      *recentIDs
	listener  net.Listener // webhook mode with Webhook.Listen
	hookMu    sync.Mutex   // serialises webhook updates
	saveMu    sync.Mutex   // serialises offset saves
	saved     string       // the offset cursor last saved
	inFlight  sync.Map     // update id (int) → struct{}: parked by this process, not done yet
	moved     sync.Map     // group chat id (int64) → the supergroup it was upgraded to (int64)
	run       atomic.Pointer[runState]
	wg        sync.WaitGroup // callbacks and replies started by Run

	delivery    metrics.Delivery
	reconnected func()                // a poll failed and is tried again
	lastPoll    atomic.Int64          // unix nanoseconds of the last getUpdates answered; 0 before the first
	lease       *gateways.LeaseConfig // nil: polling runs without one
	shared      *gateways.Shared      // nil: this instance paces and sends alone
	standby     atomic.Bool           // polling waits for the lease another instance holds
}

// runState is what a running gateway hands to its background work.
type runState struct {
	ctx   context.Context
	inbox gateways.Inbox
}

// New checks the configuration, connects (getMe) and returns the gateway.
// In webhook mode with Webhook.Listen set it also binds the listener.
func New(ctx context.Context, cfg Config, d Deps) (*Gateway, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &Gateway{
		cfg:       cfg,
		log:       d.Log.With().Str("gateway", Name).Logger(),
		secrets:   secrets.New(cfg.Token, url.PathEscape(cfg.Token), url.QueryEscape(cfg.Token), cfg.Webhook.SecretToken),
		cursors:   d.Cursors,
		parking:   d.Parking,
		approvals: d.Approvals,
		lease:     d.Lease,
		shared:    d.Shared,
		prompts:   new(gateways.PromptBook[promptRef]),
		seen:      newRecentIDs(1024),

		delivery:    d.Metrics.Delivery(Name),
		reconnected: d.Metrics.Reconnects(Name),
	}
	if g.cursors == nil {
		g.cursors = newMemCursors()
	}
	if g.parking == nil {
		g.parking = newMemParking()
	}
	if err := g.connect(ctx, d.connecting); err != nil {
		return nil, err
	}
	startup.Mark(ctx, "telegram: getMe answered")
	if g.out, err = g.newOutbox(); err != nil { // after connect: the sender is the bot's id
		return nil, err
	}
	if cfg.Mode == ModeWebhook && cfg.Webhook.Listen != "" {
		if g.listener, err = net.Listen("tcp", cfg.Webhook.Listen); err != nil {
			return nil, fmt.Errorf("telegram: webhook listen %s: %w", cfg.Webhook.Listen, err)
		}
	}
	return g, nil
}

// connect checks the token with getMe, or waits for conn's answer when
// it is under way already (Section.Prepare), and keeps the client.
func (g *Gateway) connect(ctx context.Context, conn *connecting) error {
	var bot *tgbotapi.BotAPI
	var err error
	if conn == nil {
		bot, err = askMe(ctx, g.cfg)
	} else {
		bot, err = conn.wait(ctx)
	}
	if err != nil {
		return fmt.Errorf("telegram: connect (getMe): %w", g.scrub(err))
	}
	bot.Client = g.cfg.HTTPClient
	g.bot = bot
	g.log.Info().Str("bot", bot.Self.UserName).Int64("bot_id", bot.Self.ID).Msg("connected")
	return nil
}

// askMe builds the library's client with cfg, which asks getMe.
func askMe(ctx context.Context, cfg Config) (*tgbotapi.BotAPI, error) {
	endpoint := strings.ReplaceAll(strings.TrimRight(cfg.APIURL, "/"), "%", "%%") + "/bot%s/%s"
	rctx, cancel := context.WithTimeout(ctx, cfg.SendTimeout)
	defer cancel()
	return tgbotapi.NewBotAPIWithClient(cfg.Token, endpoint, ctxClient{ctx: rctx, c: cfg.HTTPClient})
}

// connecting is a getMe under way in the background (Section.Prepare).
type connecting struct {
	client *http.Client // the client it asks with
	done   chan struct{}
	bot    *tgbotapi.BotAPI // set before done closes
	err    error
}

// dial starts getMe with cfg (defaults filled in); ctx bounds it.
func dial(ctx context.Context, cfg Config) *connecting {
	c := &connecting{client: cfg.HTTPClient, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.bot, c.err = askMe(ctx, cfg)
	}()
	return c
}

// wait returns getMe's answer once it has come, or ctx's error.
func (c *connecting) wait(ctx context.Context) (*tgbotapi.BotAPI, error) {
	select {
	case <-c.done:
		return c.bot, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// offsetCursor is the Cursors key of the update offset: one per bot, since
// bots may share a database and their update ids are unrelated. (The
// unkeyed "telegram:offset" of earlier versions needs no migration:
// Telegram itself forgets the updates an offset confirmed.)
func (g *Gateway) offsetCursor() string {
	return fmt.Sprintf("%s:%d:offset", Name, g.bot.Self.ID)
}

// Name returns "telegram".
func (g *Gateway) Name() string { return Name }

// Self returns the bot's own user as getMe reported it.
func (g *Gateway) Self() tgbotapi.User { return g.bot.Self }

// Run receives updates until ctx ends, by long polling or, in webhook mode,
// by serving the webhook. It returns nil on cancellation.
func (g *Gateway) Run(ctx context.Context, inbox gateways.Inbox) error {
	g.run.Store(&runState{ctx: ctx, inbox: inbox})
	defer g.wg.Wait()
	if g.cfg.Mode == ModeWebhook {
		return g.runWebhook(ctx)
	}
	if l := g.lease; l != nil {
		// Another instance may hold the lease for good: the bot
		// receives through it meanwhile.
		startup.Ready(ctx, "telegram: polling under the receiver lease")
		g.standby.Store(true)
		return gateways.RunUnderLease(ctx, l.Leaser, g.leaseName(), l.Holder, l.TTL, g.log,
			func(ctx context.Context) error {
				g.standby.Store(false)
				defer g.standby.Store(true)
				return g.runPolling(ctx, inbox)
			})
	}
	return g.runPolling(ctx, inbox)
}

// leaseName is the lease long polling runs under: one per bot.
func (g *Gateway) leaseName() string {
	return fmt.Sprintf("%s:%d", Name, g.bot.Self.ID)
}

// api returns a client whose requests carry ctx.
func (g *Gateway) api(ctx context.Context) *tgbotapi.BotAPI {
	b := *g.bot
	b.Client = ctxClient{ctx: ctx, c: g.cfg.HTTPClient}
	return &b
}

// ctxClient attaches a context to the library's requests, which it builds
// without one.
type ctxClient struct {
	ctx context.Context
	c   *http.Client
}

// Do sends r with the client's context.
func (c ctxClient) Do(r *http.Request) (*http.Response, error) {
	return c.c.Do(r.WithContext(c.ctx))
}

// goBackground runs f in a goroutine Run waits for.
func (g *Gateway) goBackground(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
}
