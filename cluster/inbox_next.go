package cluster

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/store"
)

// run runs the turn of e, claimed, and marks it done; a turn that never
// began is given back at once for another instance. While Run claims, the
// write that marks a turn done takes the next entry this instance would
// claim (store.InboxHandOn), whose turn then runs here in the same slot.
func (in *Inbox) run(ctx context.Context, r Runner, e store.InboxEntry) {
	for {
		next, ok := in.runOne(ctx, r, e)
		if !ok {
			// The conversation's next entry is claimable, and a slot is
			// free: claim at once rather than when the store's
			// notification comes back through the database.
			in.poke()
			return
		}
		e = next
	}
}

// finish marks entry id done and, while Run claims (ctx) and the store
// can, takes the next entry to run here in the same write.
func (in *Inbox) finish(ctx, end context.Context, log zerolog.Logger, id int64) (store.InboxEntry, bool) {
	if h, ok := in.cfg.Store.(store.InboxHandOn); ok && ctx.Err() == nil {
		// The entry taken is held by the done row's lease (lease_ttl
		// from now, and this process's heartbeat).
		next, took, err := h.FinishNextInbox(end, id, in.cfg.Instance, in.cfg.Process, in.cfg.Gateways, in.cfg.TTL)
		if err != nil {
			log.Warn().Err(err).Msg("inbox: marking the turn done")
			return store.InboxEntry{}, false
		}
		if !took {
			return store.InboxEntry{}, false
		}
		in.mu.Lock()
		in.running[next.ID] = conversation(next)
		in.mu.Unlock()
		return next, true
	}
	if err := in.cfg.Store.FinishInbox(end, id, in.cfg.Instance); err != nil {
		log.Warn().Err(err).Msg("inbox: marking the turn done")
	}
	return store.InboxEntry{}, false
}
