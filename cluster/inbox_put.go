package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
)

// loop is what Put needs of Run to run a turn it put claimed: Run's
// context and Runner, its turn slots and the turns it waits for.
type loop struct {
	ctx   context.Context
	r     Runner
	slots chan struct{}
	turns *sync.WaitGroup
}

// takeSlot takes one of Run's turn slots, if Run claims and one is free
// now, for a turn Put may start; nil otherwise. Give it back with free
// unless a turn was started in it.
func (in *Inbox) takeSlot() *loop {
	in.mu.Lock()
	defer in.mu.Unlock()
	lp := in.loop
	if lp == nil || lp.ctx.Err() != nil {
		return nil
	}
	select {
	case lp.slots <- struct{}{}:
		lp.turns.Add(1) // before Run waits for its turns: it clears in.loop first, under in.mu
		return lp
	default:
		return nil
	}
}

// free gives back a slot takeSlot took and no turn used.
func (lp *loop) free() {
	<-lp.slots
	lp.turns.Done()
}

// put writes e to the store. When this instance has a turn free and the
// store can (store.InboxClaimer), the entry is put claimed by this
// instance if nothing is before it in its conversation, and its turn
// starts at once: a message that finds its conversation idle costs no
// claim (one row write fewer), and waits for no notification.
func (in *Inbox) put(ctx context.Context, e store.InboxEntry, reserve time.Duration) (int64, bool, error) {
	pc, ok := in.cfg.Store.(store.InboxClaimer)
	var lp *loop
	if ok {
		lp = in.takeSlot()
	}
	if lp == nil {
		return in.cfg.Store.PutInbox(ctx, e, reserve)
	}
	id, added, claimed, err := pc.PutClaimInbox(ctx, e, reserve, in.cfg.TTL)
	if err != nil || !claimed {
		lp.free()
		return id, added, err
	}
	e.ID = id
	in.mu.Lock()
	in.running[id] = conversation(e)
	in.mu.Unlock()
	go func() {
		defer lp.turns.Done()
		defer func() { <-lp.slots }()
		in.run(lp.ctx, lp.r, e)
	}()
	return id, added, nil
}
