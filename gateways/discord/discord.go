// Package discord is the Discord gateway: it receives messages and
// interactions over Discord's websocket gateway, normalises them into
// signals, sends replies through the shared delivery layer (split below
// 2000 characters, paced, retried), turns approval requests into buttons
// and registers the /approve, /deny and /pending slash commands. It uses
// the unmodified github.com/bwmarrin/discordgo, pointed at Config.APIURL
// through its session's HTTP transport. The bot token never appears in a
// log line or an error.
package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// Name is the gateway's name, the first part of its conversation keys and
// identities.
const Name = "discord"

// intents are the gateway events the bot needs: guild messages, DMs and
// their content (a privileged intent, enabled in the Developer Portal).
const intents = discordgo.IntentsGuildMessages | discordgo.IntentsDirectMessages | discordgo.IntentMessageContent

var (
	_ gateways.Gateway          = (*Gateway)(nil)
	_ core.Typer                = (*Gateway)(nil)
	_ core.ApprovalPrompter     = (*Gateway)(nil)
	_ core.ApprovalUpdater      = (*Gateway)(nil)
	_ gateways.DeliveryReporter = (*Gateway)(nil)
)

// Gateway is the Discord adapter. It is safe for concurrent use; Run is
// called once.
type Gateway struct {
	cfg       Config
	log       zerolog.Logger
	s         *discordgo.Session
	self      discordgo.User // the bot's user, from GET /users/@me
	cdn       *url.URL       // the only origin attachments are fetched from
	secrets   *secrets.Set
	approvals gateways.Approvals
	lease     *gateways.LeaseConfig
	out       *gateways.Outbox
	// delivery and reconnected record this gateway's metrics.
	delivery    metrics.Delivery
	shared      *gateways.Shared // nil: this instance paces and sends alone
	reconnected func()
	prompts     *gateways.PromptBook[promptRef]
	slash       *slashBook
	guilds      *channelGuilds
	threads     gateways.Memory         // the threads the bot started, in threadScope
	parents     *channelGuilds          // thread → its parent channel, for the threads the bot started
	queue       chan *discordgo.Message // MESSAGE_CREATE in arrival order
	run         atomic.Pointer[runState]
	wg          sync.WaitGroup // interactions and replies started by Run
	bgMu        sync.Mutex
	bgStopped   bool // Run is returning: no new background work
	conn        connStats
	registered  atomic.Bool // the slash commands were registered
	up          atomic.Bool // READY or RESUMED received and not lost since
	standby     atomic.Bool // the session waits for the lease another instance holds
}

// runState is what a running gateway hands to its background work.
type runState struct {
	ctx   context.Context
	inbox gateways.Inbox
}

// New checks the configuration, checks the token with GET /users/@me and
// returns the gateway. The websocket is opened by Run.
func New(ctx context.Context, cfg Config, d Deps) (*Gateway, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &Gateway{
		cfg:       cfg,
		log:       d.Log.With().Str("gateway", Name).Logger(),
		secrets:   secrets.New(cfg.Token),
		approvals: d.Approvals,
		lease:     d.Lease,
		prompts:   new(gateways.PromptBook[promptRef]),
		slash:     newSlashBook(),
		guilds:    newChannelGuilds(4096),
		threads:   d.Memory,
		parents:   newChannelGuilds(4096),
		queue:     make(chan *discordgo.Message, 256),

		delivery:    d.Metrics.Delivery(Name),
		shared:      d.Shared,
		reconnected: d.Metrics.Reconnects(Name),
	}
	if g.threads == nil {
		g.threads = memThreads{set: newChannelGuilds(4096)}
	}
	if g.cdn, err = cdnOrigin(cfg.APIURL); err != nil {
		return nil, err
	}
	g.conn.lost = make(chan struct{}, 1)
	if g.s, err = g.session(); err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, cfg.SendTimeout)
	defer cancel()
	me, err := g.s.User("@me", discordgo.WithContext(rctx))
	if err != nil {
		return nil, fmt.Errorf("discord: connect (GET /users/@me): %w", g.scrub(err))
	}
	if me == nil || me.ID == "" {
		return nil, errors.New("discord: connect (GET /users/@me): no user in the answer")
	}
	g.self = *me
	if g.out, err = g.newOutbox(); err != nil { // after /users/@me: the sender is the bot's id
		return nil, err
	}
	g.log.Info().Str("bot", me.Username).Str("bot_id", me.ID).Msg("connected")
	return g, nil
}

// session builds the discordgo session: our transport (api_url,
// gateway_url), its logging off (its debug output prints the
// Authorization header; the gateway logs from events instead), 429s
// returned to the delivery layer rather than slept on, events handled in
// order on the reading goroutine.
func (g *Gateway) session() (*discordgo.Session, error) {
	t, err := newRewriter(g.cfg.APIURL, g.cfg.GatewayURL, g.cfg.HTTPClient.Transport)
	if err != nil {
		return nil, err
	}
	s, err := discordgo.New("Bot " + g.cfg.Token)
	if err != nil {
		return nil, fmt.Errorf("discord: session: %w", g.scrub(err))
	}
	t.opening = g.conn.opening.context
	s.Client = &http.Client{Transport: t, Jar: g.cfg.HTTPClient.Jar}
	dialer := *websocket.DefaultDialer
	dialer.NetDialContext = g.conn.opening.dial
	s.Dialer = &dialer
	s.LogLevel = discordgo.LogError - 1 // silent
	s.Debug = false
	s.ShouldRetryOnRateLimit = false
	s.SyncEvents = true
	s.ShouldReconnectOnError = false // Run reconnects, with a context (see connection.go)
	s.StateEnabled = false
	s.Identify.Intents = intents
	return s, nil
}

// Name returns "discord".
func (g *Gateway) Name() string { return Name }

// Self returns the bot's own user.
func (g *Gateway) Self() discordgo.User { return g.self }

// DeliveryStats returns the outbound delivery counters.
func (g *Gateway) DeliveryStats() gateways.DeliveryStats { return g.out.Stats() }

// Run opens the websocket and receives events until ctx ends; it returns
// nil on cancellation. Messages are submitted in the order they arrive;
// interactions are acknowledged at once and handled in the background.
// Under a lease (Deps.Lease) the websocket session is open only while
// this instance holds the lease "discord:<bot id>": one session per token
// among the instances sharing a store, taken over by another when the
// holder dies; sending works from every instance.
func (g *Gateway) Run(ctx context.Context, inbox gateways.Inbox) error {
	g.run.Store(&runState{ctx: ctx, inbox: inbox})
	defer g.waitBackground()
	if l := g.lease; l != nil {
		g.standby.Store(true)
		return gateways.RunUnderLease(ctx, l.Leaser, g.leaseName(), l.Holder, l.TTL, g.log,
			func(ctx context.Context) error {
				g.standby.Store(false)
				defer g.standby.Store(true)
				return g.receive(ctx, inbox)
			})
	}
	return g.receive(ctx, inbox)
}

// leaseName is the lease the websocket session runs under: one per bot.
func (g *Gateway) leaseName() string { return Name + ":" + g.self.ID }

// receive opens the websocket, reopens it when lost, and submits the
// messages it delivers until ctx ends; then it closes it (a later call
// opens it again, as after a lease taken back).
func (g *Gateway) receive(ctx context.Context, inbox gateways.Inbox) error {
	remove := g.addHandlers()
	defer remove()
	g.conn.closing.Store(false)
	if err := g.open(ctx); err != nil {
		return nil // ctx ended before the websocket opened
	}
	sctx, stopSupervisor := context.WithCancel(ctx)
	supervised := make(chan struct{})
	go func() {
		defer close(supervised)
		g.supervise(sctx)
	}()
	defer func() {
		stopSupervisor()
		<-supervised // no reopening once closed
		g.close()
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-g.queue:
			if err := g.onMessage(ctx, inbox, m); err != nil {
				return nil // ctx ended or the engine stopped
			}
		}
	}
}

// goBackground runs f in a goroutine Run waits for; once Run is waiting,
// f is not started.
func (g *Gateway) goBackground(f func()) {
	g.bgMu.Lock()
	defer g.bgMu.Unlock()
	if g.bgStopped {
		return
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
}

// waitBackground stops new background work and waits for the rest.
func (g *Gateway) waitBackground() {
	g.bgMu.Lock()
	g.bgStopped = true
	g.bgMu.Unlock()
	g.wg.Wait()
}
