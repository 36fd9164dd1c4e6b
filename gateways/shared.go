package gateways

import (
	"cmp"
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// SlotReserver paces requests among all the instances sharing a store
// (the store's send slots, wired by app): ReserveSlot reserves
// the earliest time, not before now on the store's clock, at which one
// more request fits every limit given (at most Limit.N requests in any
// window of Limit.Per under Slot.Key, counting every instance's), records
// it, and returns how long from now it is.
type SlotReserver interface {
	ReserveSlot(ctx context.Context, slots ...Slot) (wait time.Duration, err error)
}

// Slot is one limit of a reservation: Limit under Key. Own, when over
// zero and under Limit.Per, is the window of a run of Limit.N+1 requests
// all reserved by this instance: a run with another instance's request in
// it keeps Limit.Per.
type Slot struct {
	Key   string
	Limit Limit
	Own   time.Duration
}

// Journal keeps replies durable among the instances sharing a store (the
// store's outbox, wired by app): a reply is written before its
// first chunk is sent, its progress recorded as the platform accepts each
// chunk, and a reply whose instance died is sent by another instance with
// the same sender (app claims it and hands it to the gateway's
// Act under ResumeReply).
type Journal interface {
	// Serve tells the journal that this instance sends as sender (an
	// Outbox made with it calls it once): the replies of sender's dead
	// instances are then this one's to send.
	Serve(sender string)
	// WriteReply records a reply of sender's to conv, about to be sent,
	// and returns its id; an error wrapping ErrReplyTaken when ctx carries
	// a journaled message's id (core.JournalEntry) whose reply is written
	// already.
	WriteReply(ctx context.Context, sender string, conv core.Conversation, text string) (id int64, err error)
	// ReplyProgress records that the first done chunks of reply id were
	// accepted; final marks it ended (sent, or failed when failed is
	// true): it is never sent again.
	ReplyProgress(ctx context.Context, id int64, done int, final, failed bool) error
}

// ErrReplyTaken is matched (errors.Is) by the error of Journal.WriteReply
// for the reply of a journaled message (core.JournalEntry) that is in the
// journal already: an instance that took the message's turn over, or the
// one that first ran it, wrote it, and it is that instance's (or the
// journal's, if it died) to send. The Outbox does not send it.
var ErrReplyTaken = errors.New("gateways: the reply is in the outbox already")

// Shared is what an Outbox shares with the other instances on one store:
// the send slots and the journal. Deps.Shared is nil when the store is
// not shared (SQLite: one process, which paces in memory and sends its
// own replies).
type Shared struct {
	Slots   SlotReserver
	Journal Journal
}

// SharedMargin lengthens each window of a shared limit: the instances
// reach the platform with delays of their own (hosts, networks, a late
// timer), so two requests reserved a window apart may arrive a little
// closer; a margin of a tenth of a second keeps them within the limit at
// the cost of under a tenth of its rate. A run of one instance's own
// requests under its token takes OwnMargin instead.
const SharedMargin = 100 * time.Millisecond

// OwnMargin lengthens the window of a token's limit (Pace.Global) for a
// run of requests all reserved by this instance (Slot.Own), instead of
// SharedMargin. What keeps such a run within the platform's limit is not
// a margin but the Outbox's own pacer, which counts each of this
// instance's requests from its end (Pacer.Start; see deliver): the platform receives a request between
// its start and its end. OwnMargin keeps the store's times close to when
// the requests leave, so that another instance joining the token finds
// them where they are. An instance alone on a token with a limit of 30
// a second then sends 30 per 1.025 s, over 29 a second, where
// SharedMargin held it at 27.3; a window that holds another instance's
// request keeps SharedMargin. A chat's limit keeps SharedMargin
// throughout: it bounds no token's rate.
const OwnMargin = 25 * time.Millisecond

// SlotLateness is how late a request may leave after its shared send slot.
// The slots of the instances are a window plus a margin apart (at least
// OwnMargin), and a request later than its slot by more than the margin
// can arrive with later ones: in a window, after the requests before it
// were counted, it is one too many. A process the machine does not run
// for a while (a loaded host, a paused VM, a slow commit) wakes late for
// its slot; the Outbox then reserves another instead of sending late
// (the missed slot stays reserved, unused: the token loses that slot's
// share of its rate, never its limit). Seen in the two-instance pacing
// test of cmd/bot on 2 busy cores: a burst's requests written in fours
// within 3 ms, 31 in one second at the fake.
const SlotLateness = 10 * time.Millisecond

// maxMissedSlots bounds the slots one request reserves again after
// missing them: a host too slow to keep a slot then sends late rather
// than never (the platform's retry-after, should it answer one, is
// handled as any other).
const maxMissedSlots = 3

// sharedWait bounds one call to the store for pacing or the journal: past
// it the Outbox goes on as a single instance would, and says so once.
const sharedWait = 2 * time.Second

// resumeKey is the context key of ResumeReply.
type resumeKey struct{}

// resumed is a journalled reply being sent again: its id and the chunks
// the platform accepted before.
type resumed struct {
	id   int64
	done int
}

// ResumeReply returns ctx marking the reply sent with it (a gateway's Act
// → Outbox.Reply) as the journalled reply id, written by another instance
// that died, whose first done chunks were already accepted: the Outbox
// writes no new journal entry, skips those chunks and records its progress
// under id.
func ResumeReply(ctx context.Context, id int64, done int) context.Context {
	return context.WithValue(ctx, resumeKey{}, resumed{id: id, done: done})
}

// sharing is an Outbox's part in a Shared, and whether the store answers.
type sharing struct {
	Shared
	sender string // the token's key: "<gateway>:<bot id>"
	down   atomic.Bool
}

// reserve waits for a slot shared with the other instances: the chat's
// and the token's limits (those of Pace that are set), each window
// SharedMargin longer, the token's OwnMargin longer for a run of this
// instance's own requests. A store that does not answer
// leaves the pacing to this instance's own pacer (logged once until it
// answers again).
func (o *Outbox) reserve(ctx context.Context, chat string) error {
	s := o.shared
	if s == nil || s.Slots == nil {
		return nil
	}
	var slots []Slot
	if l := o.cfg.Pace.PerChat; l.N > 0 && l.Per > 0 {
		slots = append(slots, Slot{Key: s.sender + ":chat:" + chat, Limit: Limit{N: l.N, Per: l.Per + SharedMargin}})
	}
	if l := o.cfg.Pace.Global; l.N > 0 && l.Per > 0 {
		slots = append(slots, Slot{Key: s.sender, Limit: Limit{N: l.N, Per: l.Per + SharedMargin}, Own: l.Per + OwnMargin})
	}
	if len(slots) == 0 {
		return nil
	}
	for missed := 0; ; missed++ {
		rctx, cancel := context.WithTimeout(ctx, sharedWait)
		wait, err := s.Slots.ReserveSlot(rctx, slots...)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			o.sharedDown(err, "pacing with the other instances: the store does not answer; pacing this instance alone")
			return nil
		}
		o.sharedUp()
		due := time.Now().Add(wait)
		if err := Sleep(ctx, wait); err != nil {
			return err
		}
		late := time.Since(due)
		if late <= cmp.Or(o.cfg.SlotLateness, SlotLateness) || missed == maxMissedSlots {
			return nil
		}
		o.log.Debug().Str("chat", chat).Dur("late", late).Msg("a send slot was missed; reserving another")
	}
}

// sharedDown logs the first failure of the store since it last answered.
func (o *Outbox) sharedDown(err error, msg string) {
	if !o.shared.down.Swap(true) {
		o.log.Warn().Err(err).Msg(msg)
	}
}

// sharedUp logs that the store answers again after a failure.
func (o *Outbox) sharedUp() {
	if o.shared.down.Swap(false) {
		o.log.Info().Msg("the store answers again: pacing and the outbox are shared with the other instances")
	}
}

// entry is a reply's place in the journal; a nil entry journals nothing.
type entry struct {
	o    *Outbox
	id   int64
	done int
}

// journal writes a reply about to be sent to conv, or takes up the one
// ctx resumes; nil when there is no journal, or the store does not answer
// (the reply is sent all the same: better sent than kept). taken is true
// when the reply is a journaled message's that is in the journal already
// (ErrReplyTaken): it is not sent here.
func (o *Outbox) journal(ctx context.Context, conv core.Conversation, text string) (e *entry, taken bool) {
	if r, ok := ctx.Value(resumeKey{}).(resumed); ok {
		return &entry{o: o, id: r.id, done: r.done}, false
	}
	s := o.shared
	if s == nil || s.Journal == nil {
		return nil, false
	}
	rctx, cancel := context.WithTimeout(ctx, sharedWait)
	id, err := s.Journal.WriteReply(rctx, s.sender, conv, text)
	cancel()
	if errors.Is(err, ErrReplyTaken) {
		o.sharedUp()
		o.log.Info().Str("conv", conv.Key()).Msg("outbox: this reply is in the outbox already, another instance's to send: not sent here")
		return nil, true
	}
	if err != nil {
		o.sharedDown(err, "outbox: the store does not answer; replies are sent without being written first")
		return nil, false
	}
	o.sharedUp()
	return &entry{o: o, id: id}, false
}

// progress records that the first done chunks were accepted; final ends
// the entry (failed when the reply finally could not be delivered). A
// shutdown (ctx ended) leaves it pending, for another instance to send.
func (e *entry) progress(ctx context.Context, done int, final, failed bool) {
	if e == nil || e.o.shared == nil || e.o.shared.Journal == nil {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedWait)
	defer cancel()
	if err := e.o.shared.Journal.ReplyProgress(rctx, e.id, done, final, failed); err != nil {
		e.o.sharedDown(err, "outbox: the store does not answer; a reply's progress was not recorded")
		return
	}
	e.o.sharedUp()
}

// end records the outcome of a reply's delivery: sent, failed, or (a
// shutdown) left for another instance.
func (e *entry) end(ctx context.Context, done int, err error) {
	switch {
	case err == nil:
		e.progress(ctx, done, true, false)
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		e.progress(ctx, done, false, false)
	default:
		e.progress(ctx, done, true, true)
	}
}

// checkShared checks a Shared against the sender key it is used with.
func checkShared(s *Shared, sender string) error {
	if s != nil && sender == "" {
		return errors.New("gateways: outbox: shared with other instances but no Sender: the token's key is required")
	}
	return nil
}
