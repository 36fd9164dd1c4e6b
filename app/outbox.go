package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/store"
)

// claimBatch bounds the replies of dead instances one claim takes.
const claimBatch = 16

// sharedDelivery is what the gateways' Outboxes share with the other
// instances when the store is shared (store.Sharer) and has send slots and
// an outbox: nil otherwise (SQLite: one process paces in memory and
// sends its own replies, with no write per reply). It keeps the journal
// for outboxLoop.
func (a *App) sharedDelivery() *gateways.Shared {
	sh, ok := a.store.(store.Sharer)
	if !ok || !sh.Shared() {
		return nil
	}
	slots, ok := a.store.(store.SendSlots)
	if !ok {
		return nil
	}
	box, ok := a.store.(store.Outbox)
	if !ok {
		return nil
	}
	a.journal = &journal{st: box, instance: a.instance}
	return &gateways.Shared{Slots: storeSlots{slots}, Journal: a.journal}
}

// storeSlots is the store's send slots as a gateways.SlotReserver.
type storeSlots struct{ st store.SendSlots }

func (s storeSlots) ReserveSlot(ctx context.Context, slots ...gateways.Slot) (time.Duration, error) {
	limits := make([]store.SendLimit, len(slots))
	for i, sl := range slots {
		limits[i] = store.SendLimit{Key: sl.Key, N: sl.Limit.N, Per: sl.Limit.Per}
	}
	return s.st.ReserveSend(ctx, limits...)
}

// journal is the store's outbox as a gateways.Journal, and the senders
// this instance serves.
type journal struct {
	st       store.Outbox
	instance string

	mu      sync.Mutex
	senders []string
}

var _ gateways.Journal = (*journal)(nil)

func (j *journal) Serve(sender string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !slices.Contains(j.senders, sender) {
		j.senders = append(j.senders, sender)
	}
}

func (j *journal) served() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.senders)
}

// WriteReply writes the reply, linked to the inbox entry it answers when
// ctx carries one (core.JournalEntry): of the instances handing one
// entry's reply over (the one that ran the turn, one that took it over),
// only the first writes it; the others get gateways.ErrReplyTaken.
func (j *journal) WriteReply(ctx context.Context, sender string, conv core.Conversation, text string) (int64, error) {
	inboxID, _ := core.JournalEntry(ctx)
	id, err := j.st.AddReply(ctx, store.OutboxReply{Sender: sender, Gateway: conv.Gateway, Chat: conv.Chat,
		Thread: conv.Thread, Text: text, Composer: j.instance, InboxID: inboxID})
	if errors.Is(err, store.ErrReplyExists) {
		return 0, fmt.Errorf("%w: %w", gateways.ErrReplyTaken, err)
	}
	return id, err
}

func (j *journal) ReplyProgress(ctx context.Context, id int64, done int, final, failed bool) error {
	state := store.ReplyPending
	switch {
	case final && failed:
		state = store.ReplyFailed
	case final:
		state = store.ReplySent
	}
	return j.st.ReplyDone(ctx, id, done, state)
}

// outboxLoop sends, every every, the replies that instances which died
// (no heartbeat within ttl) composed for a sender this instance serves,
// and its own from before it started (a restart under the same name):
// each claimed once in the store, then sent through its gateway from
// the first chunk not yet accepted. It returns when ctx ends.
func (a *App) outboxLoop(ctx context.Context, every, ttl time.Duration, started time.Time) error {
	log := a.log.With().Str("instance", a.instance).Logger()
	failing := false
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		// The first claim waits a tick: this instance's heartbeat is in
		// by then, so what it claims is not claimed from it.
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for _, sender := range a.journal.served() {
			replies, err := a.journal.st.ClaimReplies(ctx, sender, a.instance, ttl, started, claimBatch)
			switch {
			case ctx.Err() != nil:
				return nil
			case err != nil && !failing:
				failing = true
				log.Warn().Err(err).Msg("outbox: replies of instances gone could not be claimed; trying again")
			case err == nil && failing:
				failing = false
				log.Info().Msg("outbox: claims work again")
			}
			for _, r := range replies {
				if ctx.Err() != nil {
					return nil // left claimed and pending: the next instance sends them
				}
				a.resend(ctx, log, r)
			}
		}
	}
}

// resend sends r, a reply another instance composed, through its gateway.
// The Outbox records its progress under r's id; a reply that cannot reach
// its gateway at all is marked failed.
func (a *App) resend(ctx context.Context, log zerolog.Logger, r store.OutboxReply) {
	conv := core.Conversation{Gateway: r.Gateway, Chat: r.Chat, Thread: r.Thread}
	log.Info().Str("conv", conv.Key()).Int64("reply", r.ID).Int("chunks_done", r.Done).
		Msg("outbox: sending a reply whose instance is gone")
	_, err := a.engine.Act(gateways.ResumeReply(ctx, r.ID, r.Done), core.Action{Kind: core.ActionReply, Conv: conv, Text: r.Text})
	if err == nil || ctx.Err() != nil {
		return
	}
	log.Error().Err(err).Str("conv", conv.Key()).Int64("reply", r.ID).Msg("outbox: a reply whose instance is gone could not be sent")
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeWait)
	defer cancel()
	if err := a.journal.st.ReplyDone(mctx, r.ID, r.Done, store.ReplyFailed); err != nil {
		log.Warn().Err(err).Int64("reply", r.ID).Msg("outbox: a failed reply not marked; it is tried again")
	}
}
