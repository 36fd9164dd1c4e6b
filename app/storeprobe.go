package app

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// probeFresh is how long one store ping's result answers every /readyz
// and every message (on a shared store) after it: a flood of probes makes
// at most one ping a second.
const probeFresh = time.Second

// storeProbe says whether the store answers: one cursor read bounded by
// readyTimeout, its result kept for probeFresh. It logs once when the
// store stops answering and once when it answers again, not at every
// ping. It is safe for concurrent use; callers arriving during a ping
// wait for its result.
type storeProbe struct {
	st    gateways.Cursors
	log   zerolog.Logger
	now   func() time.Time
	fresh time.Duration

	mu   sync.Mutex
	at   time.Time // of the last ping; zero before the first
	err  error     // its result
	down bool      // the last ping failed (for the log lines)
}

func newStoreProbe(st gateways.Cursors, log zerolog.Logger) *storeProbe {
	return &storeProbe{st: st, log: log, now: time.Now, fresh: probeFresh}
}

// check returns nil when the store answered its latest ping, made now
// unless one was made within p.fresh. A ping cut short by ctx ending (the
// caller went away) is not kept.
func (p *storeProbe) check(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() && p.now().Sub(p.at) < p.fresh {
		return p.err
	}
	pctx, cancel := context.WithTimeout(ctx, readyTimeout)
	_, err := p.st.Cursor(pctx, readyCursor)
	cancel()
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	p.at, p.err = p.now(), err
	switch {
	case err != nil && !p.down:
		p.down = true
		p.log.Warn().Err(err).Msg("store: not answering; the bot is not ready and takes no message until it answers again")
	case err == nil && p.down:
		p.down = false
		p.log.Info().Msg("store: answering again; the bot is ready")
	}
	return err
}

// guardedInbox is the gateways' Inbox on a store shared by several
// instances (a database server, which can be lost while the bot runs):
// while the store does not answer, Submit refuses with an error wrapping
// core.ErrUnavailable and the message is not handed to the engine. The
// gateway then leaves it unacknowledged where the platform delivers it
// again (a long poll's update offset, an unacknowledged envelope), and
// tells the sender to try again where it does not. Available lets a gateway ask
// before it acknowledges (gateways.Availability).
type guardedInbox struct {
	inbox gateways.Inbox
	probe *storeProbe
}

var _ gateways.Availability = guardedInbox{}

// Submit hands s to the inbox when the store answers.
func (g guardedInbox) Submit(ctx context.Context, s core.Signal) error {
	if err := g.Available(ctx); err != nil {
		return err
	}
	return g.inbox.Submit(ctx, s)
}

// Available returns nil when the store answers, an error wrapping
// core.ErrUnavailable when it does not, or ctx's error.
func (g guardedInbox) Available(ctx context.Context) error {
	if err := g.probe.check(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: the store does not answer: %w", core.ErrUnavailable, err)
	}
	return nil
}
