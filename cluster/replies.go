package cluster

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

// markWait bounds the write that marks a reply failed after its context
// ended.
const markWait = 5 * time.Second

// Slots is the store's send slots as a gateways.SlotReserver: a
// platform's limits per token held by every instance together. Instance
// names this instance in its reservations (store.SendLimit.Owner), so that
// a slot's own window (gateways.Slot.Own) applies to its runs alone.
type Slots struct {
	St       store.SendSlots
	Instance string
}

// ReserveSlot reserves the earliest time at which one more request fits
// every slot's limit, counting every instance's requests.
func (s Slots) ReserveSlot(ctx context.Context, slots ...gateways.Slot) (time.Duration, error) {
	limits := make([]store.SendLimit, len(slots))
	for i, sl := range slots {
		limits[i] = store.SendLimit{Key: sl.Key, N: sl.Limit.N, Per: sl.Limit.Per, Own: sl.Own, Owner: s.Instance}
	}
	return s.St.ReserveSend(ctx, limits...)
}

// Replies is the store's outbox as a gateways.Journal (each reply written
// before it is sent), and the senders this instance serves, whose replies
// left by instances gone it sends (Resume).
type Replies struct {
	st       store.Outbox
	instance string

	mu      sync.Mutex
	senders []string
}

var _ gateways.Journal = (*Replies)(nil)

// NewReplies returns the outbox of instance over st.
func NewReplies(st store.Outbox, instance string) *Replies {
	return &Replies{st: st, instance: instance}
}

// Serve records that this instance sends for sender (a gateway's token).
func (j *Replies) Serve(sender string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !slices.Contains(j.senders, sender) {
		j.senders = append(j.senders, sender)
	}
}

// Served lists the senders this instance sends for.
func (j *Replies) Served() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.senders)
}

// WriteReply writes the reply, linked to the inbox entry it answers when
// ctx carries one (core.JournalEntry): of the instances handing one
// entry's reply over (the one that ran the turn, one that took it over),
// only the first writes it; the others get gateways.ErrReplyTaken.
func (j *Replies) WriteReply(ctx context.Context, sender string, conv core.Conversation, text string) (int64, error) {
	inboxID, _ := core.JournalEntry(ctx)
	id, err := j.st.AddReply(ctx, store.OutboxReply{Sender: sender, Gateway: conv.Gateway, Chat: conv.Chat,
		Thread: conv.Thread, Text: text, Composer: j.instance, InboxID: inboxID})
	if errors.Is(err, store.ErrReplyExists) {
		return 0, fmt.Errorf("%w: %w", gateways.ErrReplyTaken, err)
	}
	return id, err
}

// ReplyProgress records how many chunks of reply id were accepted, and
// whether it is done (sent or failed).
func (j *Replies) ReplyProgress(ctx context.Context, id int64, done int, final, failed bool) error {
	state := store.ReplyPending
	switch {
	case final && failed:
		state = store.ReplyFailed
	case final:
		state = store.ReplySent
	}
	return j.st.ReplyDone(ctx, id, done, state)
}

// Actor sends a reply through its gateway (core.Engine.Act).
type Actor interface {
	Act(ctx context.Context, a core.Action) (core.Result, error)
}

// Resume sends, every every, the replies that instances which died
// (no heartbeat within ttl) composed for a sender this instance serves,
// and its own from before it started (a restart under the same name):
// each claimed once in the store, then sent through its gateway from
// the first chunk not yet accepted. It returns when ctx ends.
func (j *Replies) Resume(ctx context.Context, act Actor, every, ttl time.Duration, started time.Time, log zerolog.Logger) error {
	log = log.With().Str("instance", j.instance).Logger()
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
		for _, sender := range j.Served() {
			replies, err := j.st.ClaimReplies(ctx, sender, j.instance, ttl, started, claimBatch)
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
				j.resend(ctx, act, log, r)
			}
		}
	}
}

// resend sends r, a reply another instance composed, through its gateway.
// The Outbox records its progress under r's id; a reply that cannot reach
// its gateway at all is marked failed.
func (j *Replies) resend(ctx context.Context, act Actor, log zerolog.Logger, r store.OutboxReply) {
	conv := core.Conversation{Gateway: r.Gateway, Chat: r.Chat, Thread: r.Thread}
	log.Info().Str("conv", conv.Key()).Int64("reply", r.ID).Int("chunks_done", r.Done).
		Msg("outbox: sending a reply whose instance is gone")
	_, err := act.Act(gateways.ResumeReply(ctx, r.ID, r.Done), core.Action{Kind: core.ActionReply, Conv: conv, Text: r.Text})
	if err == nil || ctx.Err() != nil {
		return
	}
	log.Error().Err(err).Str("conv", conv.Key()).Int64("reply", r.ID).Msg("outbox: a reply whose instance is gone could not be sent")
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markWait)
	defer cancel()
	if err := j.st.ReplyDone(mctx, r.ID, r.Done, store.ReplyFailed); err != nil {
		log.Warn().Err(err).Int64("reply", r.ID).Msg("outbox: a failed reply not marked; it is tried again")
	}
}
