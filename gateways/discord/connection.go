package discord

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/gateways"
)

// connStats counts the websocket's life.
type connStats struct {
	opened     atomic.Uint64 // successful opens (identify or resume)
	reconnects atomic.Uint64 // opens after a lost connection
	resumed    atomic.Uint64 // sessions resumed (RESUMED)
	lost       chan struct{} // a connection was lost; Run's supervisor reopens
	opening    opening       // the attempt at opening under way
	closing    atomic.Bool   // Run is shutting down: a Disconnect is expected
}

// Reconnects returns how many times the websocket was opened again after
// a lost connection (dropped, op 7, op 9, missed heartbeat ACKs).
func (g *Gateway) Reconnects() uint64 { return g.conn.reconnects.Load() }

// open opens the websocket, trying again with backoff until it opens or
// ctx ends (a network down at start or after a drop is waited out).
// discordgo RESUMEs when it still holds a session, else it IDENTIFYs.
func (g *Gateway) open(ctx context.Context) error {
	for n := 0; ; n++ {
		err := g.openOnce(ctx)
		if err == nil || errors.Is(err, discordgo.ErrWSAlreadyOpen) {
			g.conn.opened.Add(1)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err() // the attempt was cut by shutdown
		}
		wait := g.cfg.OpenBackoff.Next(n)
		g.log.Warn().Err(g.scrub(err)).Dur("retry_in", wait).Msg("cannot open the websocket")
		if err := gateways.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// openOnce makes one attempt at opening the websocket, cut short (see
// opening) when it takes longer than the send timeout or ctx ends.
func (g *Gateway) openOnce(ctx context.Context) error {
	g.conn.opening.start()
	defer g.conn.opening.finish()
	timer := time.AfterFunc(g.cfg.SendTimeout, g.conn.opening.cut)
	defer timer.Stop()
	defer context.AfterFunc(ctx, g.conn.opening.cut)()
	return g.s.Open()
}

// supervise reopens the websocket each time it is lost, until ctx ends.
// discordgo closes the socket itself on a read error, op 7 or missing
// heartbeat ACKs (op 9 it handles on the same socket); its own reconnect
// loop is off because it cannot be stopped.
func (g *Gateway) supervise(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.conn.lost:
		}
		n := g.conn.reconnects.Add(1)
		g.reconnected()
		g.log.Warn().Uint64("reconnects", n).Msg("websocket lost; reconnecting")
		// A first pause, as after a failed open: the lost connection's
		// heartbeat goroutine may still be failing its last write, and
		// discordgo reads its session's gateway URL there without the lock
		// Open writes it under; once that goroutine has closed the session
		// (under the lock) Open is safe. It also spares the platform an
		// instant reconnect storm.
		if err := gateways.Sleep(ctx, g.cfg.OpenBackoff.Next(0)); err != nil {
			return
		}
		if err := g.open(ctx); err != nil {
			return
		}
		g.log.Info().Uint64("reconnects", n).Msg("websocket reconnected")
	}
}

// close closes the websocket at shutdown.
func (g *Gateway) close() {
	g.conn.closing.Store(true)
	if err := g.s.Close(); err != nil {
		g.log.Debug().Err(g.scrub(err)).Msg("closing the websocket")
	}
}

// onDisconnect notes a lost connection for the supervisor.
func (g *Gateway) onDisconnect(*discordgo.Session, *discordgo.Disconnect) {
	g.up.Store(false)
	if g.conn.closing.Load() {
		return
	}
	select {
	case g.conn.lost <- struct{}{}:
	default: // a reconnect is already due
	}
}

func (g *Gateway) onConnect(*discordgo.Session, *discordgo.Connect) {
	g.log.Debug().Msg("websocket open")
}

func (g *Gateway) onResumed(*discordgo.Session, *discordgo.Resumed) {
	g.conn.resumed.Add(1)
	g.up.Store(true)
	g.log.Info().Msg("session resumed")
}

// onReady registers the slash commands once, with the application id READY
// names (the bot's own id when it names none).
func (g *Gateway) onReady(_ *discordgo.Session, r *discordgo.Ready) {
	app := g.self.ID
	if r != nil && r.Application != nil && r.Application.ID != "" {
		app = r.Application.ID
	}
	g.up.Store(true)
	g.log.Info().Msg("session ready (identified)")
	if !g.registered.CompareAndSwap(false, true) {
		return
	}
	rs := g.run.Load()
	if rs == nil {
		return
	}
	g.goBackground(func() { g.registerCommands(rs.ctx, app) })
}

// addHandlers registers the event handlers and returns their removal.
func (g *Gateway) addHandlers() func() {
	removes := []func(){
		g.s.AddHandler(g.onConnect),
		g.s.AddHandler(g.onDisconnect),
		g.s.AddHandler(g.onResumed),
		g.s.AddHandler(g.onReady),
		g.s.AddHandler(g.onEvent),
	}
	return func() {
		for _, r := range removes {
			r()
		}
	}
}
