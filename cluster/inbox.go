package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store"
)

// Runner runs a claimed message's turn, and stops one when /cancel
// reached another instance: the Engine.
type Runner interface {
	RunJournaled(ctx context.Context, j core.Journaled) (bool, error)
	CancelTurn(conv core.Conversation) bool
}

// Forgetter is a Runner that can also do what /reset does to a turn
// running here when /reset reached another instance: the Engine.
type Forgetter interface {
	ForgetTurn(ctx context.Context, conv core.Conversation) (bool, error)
}

// Config configures an Inbox. Store, Instance and TTL are required.
type Config struct {
	Store store.Inbox
	// Instance is this instance's name: the holder of its claims.
	Instance string
	// TTL is how long a claim lasts unrenewed (store.lease_ttl); claims
	// are renewed every third of it.
	TTL time.Duration
	// Process is this process's id in its heartbeats (Member.Process):
	// an entry this instance takes when it finishes a turn is then kept
	// by the heartbeat, with no write of its own; "" (no heartbeat) it is
	// claimed in its own row by its first renewal.
	Process string
	// Gateways are the gateways whose messages go through the inbox, and
	// whose conversations this instance claims: those every instance may
	// answer (not a terminal of one instance).
	Gateways []string
	// Slots bounds the turns this instance runs at once; default 8.
	Slots int
	// Poll is how often the inbox is looked at without a wake-up (an
	// expired claim wakes nobody; a notification can be lost); default a
	// quarter of TTL, within 250ms and 5s.
	Poll time.Duration
	Log  zerolog.Logger
}

// keepFiles bounds how long the attachments of a message this instance
// received are kept for its turn.
const keepFiles = store.InboxKeep

// Inbox is a core.Journal on a shared store and the loop that claims and
// runs the turns of its messages.
type Inbox struct {
	cfg      Config
	gateways map[string]bool
	wake     chan struct{}
	cancels  chan struct{} // a turn here may have been asked to stop

	mu      sync.Mutex
	loop    *loop                       // Run's, while it claims
	files   map[string]*held            // by gateway and key: the attachments of messages received here
	running map[int64]core.Conversation // entries whose turns run here
	forgot  map[int64]bool              // running entries /reset elsewhere was done for here
}

// held is what this instance keeps of a message it received with files.
type held struct {
	id    int64
	atts  []core.Attachment
	since time.Time
}

var (
	_ core.Journal          = (*Inbox)(nil)
	_ core.JournalCanceller = (*Inbox)(nil)
	_ core.JournalResetter  = (*Inbox)(nil)
)

// New checks cfg and returns an Inbox; Run claims its messages.
func New(cfg Config) (*Inbox, error) {
	if cfg.Store == nil || cfg.Instance == "" || cfg.TTL <= 0 {
		return nil, errors.New("inbox: needs a store, the instance's name and a positive lease ttl")
	}
	if cfg.Slots <= 0 {
		cfg.Slots = 8
	}
	if cfg.Poll <= 0 {
		cfg.Poll = min(max(cfg.TTL/4, 250*time.Millisecond), 5*time.Second)
	}
	gws := make(map[string]bool, len(cfg.Gateways))
	for _, g := range cfg.Gateways {
		gws[g] = true
	}
	return &Inbox{cfg: cfg, gateways: gws, wake: make(chan struct{}, 1), cancels: make(chan struct{}, 1),
		files: make(map[string]*held), running: make(map[int64]core.Conversation), forgot: make(map[int64]bool)}, nil
}

// UseGateways sets Config.Gateways: the gateways are built after the
// Engine, which is given the Inbox. Call it before Run and before any
// message is put.
func (in *Inbox) UseGateways(names []string) {
	in.cfg.Gateways = append([]string(nil), names...)
	in.gateways = make(map[string]bool, len(names))
	for _, g := range names {
		in.gateways[g] = true
	}
}

// Put writes a message of one of the inbox's gateways to the store and
// reports true; a redelivery (same gateway, chat and message id) is not
// written again, and is taken too. A message with files is reserved for
// this instance, which holds them, while it lives. An error wraps
// core.ErrUnavailable: the message was not recorded.
func (in *Inbox) Put(ctx context.Context, s core.Signal) (bool, error) {
	if !in.gateways[s.Conv.Gateway] {
		return false, nil
	}
	data, err := encode(s)
	if err != nil {
		return false, err
	}
	e := store.InboxEntry{Gateway: s.Conv.Gateway, Key: messageKey(s), Conv: s.Conv.Key(), Data: data,
		Files: len(s.Attachments), Receiver: in.cfg.Instance}
	var reserve time.Duration
	fk := e.Gateway + "\x00" + e.Key
	if len(s.Attachments) > 0 {
		reserve = in.cfg.TTL
		in.mu.Lock() // before the put: this instance may claim it at once
		if _, dup := in.files[fk]; !dup {
			in.files[fk] = &held{atts: s.Attachments, since: time.Now()}
		}
		in.mu.Unlock()
	}
	id, added, err := in.put(ctx, e, reserve)
	in.mu.Lock()
	if h := in.files[fk]; h != nil && h.id == 0 {
		if err != nil || !added {
			delete(in.files, fk)
		} else {
			h.id = id
		}
	}
	in.mu.Unlock()
	if err != nil {
		return false, fmt.Errorf("inbox: put a message of %s: %w: %w", e.Conv, core.ErrUnavailable, err)
	}
	if added {
		in.poke()
	}
	return true, nil
}

// CancelElsewhere asks the instance holding conv's turn to stop it.
func (in *Inbox) CancelElsewhere(ctx context.Context, conv core.Conversation) (bool, error) {
	if !in.gateways[conv.Gateway] {
		return false, nil
	}
	ok, err := in.cfg.Store.CancelInbox(ctx, conv.Key())
	if err != nil {
		return false, fmt.Errorf("inbox: %w", err)
	}
	return ok, nil
}

// ResetShared forgets conv's history and marks the turn of conv that
// another instance runs, if any, so that it stops it keeping nothing
// (store.InboxResetter), reporting whether there was one (stopped).
// shared is false when conv is not the inbox's or the store cannot.
func (in *Inbox) ResetShared(ctx context.Context, conv core.Conversation) (shared, stopped bool, err error) {
	rs, ok := in.cfg.Store.(store.InboxResetter)
	if !ok || !in.gateways[conv.Gateway] {
		return false, false, nil
	}
	marked, err := rs.ResetInbox(ctx, conv.Key(), in.cfg.Instance)
	if err != nil {
		return false, false, fmt.Errorf("inbox: %w", err)
	}
	return true, marked, nil
}

// forgetReset does what /reset on another instance asked for each of
// ids, entries running here, that it marked and that it was not done
// for yet: the turn is stopped and the history forgotten again (what the
// turn wrote between the reset and now goes too), once per entry. The
// conversation's next entry is not claimed meanwhile: this one is not
// finished.
func (in *Inbox) forgetReset(ctx context.Context, r Runner, ids []int64) {
	rs, ok := in.cfg.Store.(store.InboxResetter)
	f, fok := r.(Forgetter)
	if !ok || !fok || len(ids) == 0 {
		return
	}
	marked, err := rs.InboxResets(ctx, ids)
	if err != nil {
		if ctx.Err() == nil {
			in.cfg.Log.Warn().Err(err).Msg("inbox: reading the turns /reset asked to stop failed")
		}
		return
	}
	for _, id := range marked {
		in.mu.Lock()
		conv, running := in.running[id]
		done := in.forgot[id]
		if running {
			in.forgot[id] = true
		}
		in.mu.Unlock()
		if !running || done {
			continue
		}
		stopped, err := f.ForgetTurn(ctx, conv)
		if err != nil {
			in.mu.Lock()
			delete(in.forgot, id) // tried again
			in.mu.Unlock()
			in.cfg.Log.Error().Err(err).Str("conv", conv.Key()).Int64("inbox_id", id).Msg("inbox: forgetting the history for /reset on another instance failed")
			continue
		}
		in.cfg.Log.Info().Str("conv", conv.Key()).Int64("inbox_id", id).Bool("stopped", stopped).
			Msg("inbox: turn stopped by /reset on another instance; nothing of it kept")
	}
}

// poke wakes the claim loop.
func (in *Inbox) poke() {
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// notified handles a notification: a cancel wakes the cancel check,
// anything else the claim loop.
func (in *Inbox) notified(what string) {
	if what != store.InboxCancel {
		in.poke()
		return
	}
	select {
	case in.cancels <- struct{}{}:
	default:
	}
}

// stopCancelled stops the turns running here that /cancel on another
// instance asked to stop.
func (in *Inbox) stopCancelled(ctx context.Context, r Runner) {
	in.mu.Lock()
	running := make([]int64, 0, len(in.running))
	for id := range in.running {
		running = append(running, id)
	}
	in.mu.Unlock()
	if len(running) == 0 {
		return
	}
	in.forgetReset(ctx, r, running)
	ids, err := in.cfg.Store.CancelledInbox(ctx, in.cfg.Instance)
	if err != nil {
		if ctx.Err() == nil {
			in.cfg.Log.Warn().Err(err).Msg("inbox: reading the turns asked to stop failed")
		}
		return
	}
	for _, id := range ids {
		in.mu.Lock()
		conv, ok := in.running[id]
		in.mu.Unlock()
		if ok && r.CancelTurn(conv) {
			in.cfg.Log.Info().Str("conv", conv.Key()).Int64("inbox_id", id).Msg("inbox: turn stopped by /cancel on another instance")
		}
	}
}

// Run claims messages and has r run their turns, at most Slots at once,
// until ctx ends; it then waits for the turns under way (r, the Engine,
// bounds them by its grace period), renewing their claims meanwhile, and
// gives back those that never began.
func (in *Inbox) Run(ctx context.Context, r Runner) error {
	renewCtx, stopRenew := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRenew()
	var bg sync.WaitGroup
	bg.Add(2)
	go func() { defer bg.Done(); in.renew(renewCtx, r) }()
	go func() { defer bg.Done(); in.watch(ctx) }()

	slots := make(chan struct{}, in.cfg.Slots)
	var turns sync.WaitGroup
	in.mu.Lock()
	in.loop = &loop{ctx: ctx, r: r, slots: slots, turns: &turns}
	in.mu.Unlock()
	poll := time.NewTicker(in.cfg.Poll)
	defer poll.Stop()
	failing := false
	for ctx.Err() == nil {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		e, ok, err := in.cfg.Store.ClaimInbox(ctx, in.cfg.Instance, in.cfg.Gateways, in.cfg.TTL)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			failing = true
			in.cfg.Log.Warn().Err(err).Msg("inbox: claiming failed; trying again")
		case err == nil && failing:
			failing = false
			in.cfg.Log.Info().Msg("inbox: claiming works again")
		}
		if err != nil || !ok {
			<-slots
			select {
			case <-in.wake:
			case <-poll.C:
			case <-ctx.Done():
			}
			continue
		}
		in.mu.Lock()
		in.running[e.ID] = conversation(e)
		in.mu.Unlock()
		turns.Add(1)
		go func() {
			defer turns.Done()
			defer func() { <-slots }()
			in.run(ctx, r, e)
		}()
	}
	in.mu.Lock()
	in.loop = nil // Put starts no turn from here on
	in.mu.Unlock()
	turns.Wait()
	stopRenew()
	bg.Wait()
	return nil
}

// storeWait bounds the store writes that end a turn (done, given back).
const storeWait = 10 * time.Second

// runOne is run for one entry; it returns the entry taken when e was
// marked done, if any, already counted as running here.
func (in *Inbox) runOne(ctx context.Context, r Runner, e store.InboxEntry) (store.InboxEntry, bool) {
	defer func() {
		in.mu.Lock()
		delete(in.running, e.ID)
		delete(in.forgot, e.ID)
		in.mu.Unlock()
	}()
	log := in.cfg.Log.With().Str("conv", e.Conv).Int64("inbox_id", e.ID).Logger()
	s, err := decode(e.Data)
	if err != nil {
		end, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeWait)
		defer cancel()
		// Not a message this gatehouse wrote: nothing can run it.
		log.Error().Err(err).Msg("inbox: entry not readable; dropped")
		if err := in.cfg.Store.FinishInbox(end, e.ID, in.cfg.Instance); err != nil {
			log.Error().Err(err).Msg("inbox: finish")
		}
		return store.InboxEntry{}, false
	}
	j := core.Journaled{Signal: s, Stage: core.TurnStage(e.Stage), ID: e.ID,
		Record: func(ctx context.Context, st core.TurnStage) error {
			return in.cfg.Store.SetInboxStage(ctx, e.ID, in.cfg.Instance, int(st))
		}}
	if rs, ok := in.cfg.Store.(store.InboxReplies); ok {
		j.RecordReply = func(ctx context.Context, text string) error {
			return rs.SetInboxReply(ctx, e.ID, in.cfg.Instance, int(core.StageReplied), text)
		}
		if e.Stage == int(core.StageReplied) {
			// Taken over after the reply was recorded: it is handed over
			// again (sent unless the outbox has it). Without the text the
			// turn cannot run here: given back, tried again.
			if j.Reply, err = rs.InboxReply(ctx, e.ID); err != nil {
				end, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeWait)
				defer cancel()
				log.Warn().Err(err).Msg("inbox: the recorded reply could not be read; the turn is given back")
				if err := in.cfg.Store.ReleaseInbox(end, e.ID, in.cfg.Instance); err != nil {
					log.Warn().Err(err).Msg("inbox: giving back a turn that did not run; it is taken over once its claim expires")
				}
				return store.InboxEntry{}, false
			}
		}
	}
	in.mu.Lock()
	fk := e.Gateway + "\x00" + e.Key
	if h := in.files[fk]; h != nil {
		j.Signal.Attachments = h.atts
		delete(in.files, fk)
	} else if e.Files > 0 && e.Stage == int(core.StageReceived) {
		j.FilesLost = e.Files
	}
	in.mu.Unlock()
	if e.Stage != int(core.StageReceived) || e.Receiver != in.cfg.Instance {
		log.Info().Str("receiver", e.Receiver).Int("stage", e.Stage).Msg("inbox: message taken over")
	}
	// The turn is not cut by ctx: the Engine ends it within its grace
	// period at shutdown, and until then the claim must stay held.
	ran, err := r.RunJournaled(context.WithoutCancel(ctx), j)
	end, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeWait) // from the turn's end
	defer cancel()
	switch {
	case err != nil || !ran:
		log.Info().Err(err).Msg("inbox: turn did not run here; given back")
		if err := in.cfg.Store.ReleaseInbox(end, e.ID, in.cfg.Instance); err != nil {
			log.Warn().Err(err).Msg("inbox: giving back a turn that did not run; it is taken over once its claim expires")
		}
	default:
		// /reset on another instance may have marked the turn after it
		// wrote its last: what it wrote since the reset goes before the
		// next entry of the conversation can run.
		in.forgetReset(end, r, []int64{e.ID})
		return in.finish(ctx, end, log, e.ID)
	}
	return store.InboxEntry{}, false
}

// conversation is e's conversation, as its stored message names it.
func conversation(e store.InboxEntry) core.Conversation {
	if s, err := decode(e.Data); err == nil {
		return s.Conv
	}
	return core.Conversation{}
}

// renew renews the claims of the turns running here and the reservations
// of messages received here with files, every third of TTL, until ctx
// ends; it forgets files kept longer than keepFiles. It also stops the
// turns /cancel asked to stop elsewhere, when notified and on each
// renewal (a notification can be lost).
func (in *Inbox) renew(ctx context.Context, r Runner) {
	t := time.NewTicker(in.cfg.TTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-in.cancels:
			in.stopCancelled(ctx, r)
			continue
		case <-t.C:
		}
		in.stopCancelled(ctx, r)
		in.mu.Lock()
		ids := make([]int64, 0, len(in.running)+len(in.files))
		for id := range in.running {
			ids = append(ids, id)
		}
		for k, h := range in.files {
			if time.Since(h.since) > keepFiles {
				delete(in.files, k)
			} else if h.id != 0 {
				ids = append(ids, h.id)
			}
		}
		in.mu.Unlock()
		if err := in.cfg.Store.RenewInbox(ctx, in.cfg.Instance, ids, in.cfg.TTL); err != nil && ctx.Err() == nil {
			in.cfg.Log.Warn().Err(err).Int("entries", len(ids)).Msg("inbox: renewing claims failed; trying again")
		}
	}
}

// watch wakes the claim loop on the store's notifications until ctx
// ends; a lost connection is listened on again after a poll interval.
func (in *Inbox) watch(ctx context.Context) {
	for ctx.Err() == nil {
		err := in.cfg.Store.WatchInbox(ctx, in.notified)
		if err != nil && ctx.Err() == nil {
			in.cfg.Log.Debug().Err(err).Msg("inbox: notifications lost; polling until they are back")
		}
		in.poke() // what was missed meanwhile
		select {
		case <-ctx.Done():
		case <-time.After(in.cfg.Poll):
		}
	}
}
