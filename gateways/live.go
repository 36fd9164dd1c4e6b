package gateways

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// The pace of a live reply.
const (
	// LiveEvery is the least time between the end of one delivery to a
	// live message (its send or an edit) and the next edit of it.
	LiveEvery = time.Second
	// LiveFirstWait is how long after a live reply starts its first
	// message is sent even without a sentence end in the text.
	LiveFirstWait = time.Second
)

// LiveFuncs are what a platform adapter supplies for a live reply: one
// attempt at each request, no retries of their own (the Outbox retries).
type LiveFuncs struct {
	// Send sends text, at most the Outbox's limit, as a new message, the
	// index-th of the reply (from 0: the first carries the reply
	// reference), and returns the platform's id of it.
	Send func(ctx context.Context, text string, index int) (id string, err error)
	// Edit replaces the text of the message id with text.
	Edit func(ctx context.Context, id, text string) error
}

// Live is a reply shown while it is written: the one implementation of
// core.LiveReply every platform adapter shares on top of its Outbox.
//
// Its first message is sent when the text has a sentence end, or
// LiveFirstWait after the reply started; then the message is edited as
// the text grows, at most once per LiveEvery per message, each send and
// edit through the Outbox (ordered with the conversation's other
// deliveries, paced, retried, counted). When the text passes the limit
// the current message is finalised at Split's cut and a new one started,
// so that once Finish returns the messages show exactly Outbox.Split of
// the final text, what Reply would have sent. Edits that would not change
// a message are skipped. A message whose edit finally fails is left as it
// is, the reply is no longer updated, and its final text from that message
// on is sent as new messages when it is finished: no text is lost. So is a
// partial text whose send finally fails (a lone code fence, which a
// platform may render as empty and refuse): the final text is sent when it
// comes.
// Live is safe for concurrent use.
type Live struct {
	out   *Outbox
	conv  core.Conversation
	funcs LiveFuncs
	start time.Time

	mu    sync.Mutex
	text  string
	final bool    // Finish was called: text is the final text
	note  *string // Abandon was called with this note
	wake  chan struct{}
	done  chan struct{} // closed when the worker ends
	err   error         // the worker's result, set before done closes

	msgs   []liveMsg // the messages sent, in order (worker only)
	stale  []liveMsg // those dropped from msgs when an edit failed: Abandon still withdraws them (worker only)
	noEdit bool      // an edit or a partial's send finally failed: the rest waits for Finish (worker only)
}

// liveMsg is a message of a live reply.
type liveMsg struct {
	id    string
	shown string    // the text it shows
	next  time.Time // the earliest time of its next edit
}

var _ core.LiveReply = (*Live)(nil)

// StartLive starts a live reply to conv whose messages are sent and edited
// with f. Its worker ends when the reply is finished or abandoned, or when
// ctx ends.
func (o *Outbox) StartLive(ctx context.Context, conv core.Conversation, f LiveFuncs) *Live {
	l := &Live{out: o, conv: conv, funcs: f, start: time.Now(), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go l.run(ctx)
	return l
}

// Update shows text, the whole reply so far. It does not wait for the
// delivery.
func (l *Live) Update(text string) {
	l.mu.Lock()
	if l.final || l.note != nil {
		l.mu.Unlock()
		return
	}
	l.text = text
	l.mu.Unlock()
	l.poke()
}

// Finish makes the reply's messages show exactly Outbox.Split(final) and
// waits until they do. It returns an error when part of final could not
// be delivered, or when ctx ends first.
//
// With Shared, final is written to the store's outbox first: if this
// instance dies before the messages show it, another instance sends
// final as a new reply (what was shown live stays as it was).
func (l *Live) Finish(ctx context.Context, final string) error {
	l.mu.Lock()
	open := l.note == nil && !l.final
	l.mu.Unlock()
	var e *entry
	if open { // written before the worker may show it
		// A reply in the outbox already (taken) is another instance's, which
		// took this turn over while this one was cut off: the live message
		// is finished all the same, it shows what this instance streamed.
		e, _ = l.out.journal(ctx, l.conv, final)
	}
	l.mu.Lock()
	if l.note == nil && !l.final {
		l.text, l.final = final, true
	}
	l.mu.Unlock()
	l.poke()
	err := l.wait(ctx)
	if e != nil {
		e.end(ctx, len(l.out.Split(final)), err)
	}
	return err
}

// Abandon ends the reply without a final text: every message sent shows
// note instead of the text it had. It waits until they do or ctx ends.
func (l *Live) Abandon(ctx context.Context, note string) {
	l.mu.Lock()
	if l.note == nil && !l.final {
		l.note = &note
	}
	l.mu.Unlock()
	l.poke()
	_ = l.wait(ctx)
}

func (l *Live) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *Live) wait(ctx context.Context) error {
	select {
	case <-l.done:
		return l.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run delivers until the reply is finished or abandoned, or ctx ends.
func (l *Live) run(ctx context.Context) {
	var err error
	defer func() {
		l.err = err
		close(l.done)
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		l.mu.Lock()
		text, final, note := l.text, l.final, l.note
		l.mu.Unlock()
		if note != nil {
			l.withdraw(ctx, *note)
			return
		}
		var wait time.Duration
		var idle bool
		wait, idle, err = l.step(ctx, text, final)
		if err != nil || idle && final {
			return
		}
		if wait == 0 && !idle {
			continue
		}
		var alarm <-chan time.Time
		if !idle {
			timer.Reset(wait)
			alarm = timer.C
		}
		select {
		case <-ctx.Done():
			err = ctx.Err()
			return
		case <-l.wake:
		case <-alarm:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// step makes at most one delivery towards showing text. It returns how
// long to wait before the next one is due (with idle false), or idle when
// the messages show text. err is a failure that ends the reply.
func (l *Live) step(ctx context.Context, text string, final bool) (wait time.Duration, idle bool, err error) {
	if l.noEdit && !final {
		return 0, true, nil
	}
	want := l.out.Split(text)
	now := time.Now()
	if len(l.msgs) == 0 && len(want) > 0 && !final && !sentenceEnd(text) {
		if due := l.start.Add(LiveFirstWait); now.Before(due) {
			return due.Sub(now), false, nil
		}
	}
	for i, w := range want {
		if i == len(l.msgs) {
			id, err := l.out.sendOne(ctx, l.conv, func(ctx context.Context) (string, error) { return l.funcs.Send(ctx, w, i) })
			if err != nil && !final && ctx.Err() == nil {
				// A partial the platform refuses (a lone code fence that
				// renders as an empty message) is not the reply: stop
				// updating, and send the final text when it comes.
				l.out.log.Warn().Str("conv", l.conv.Key()).Int("message", i+1).Msg("live reply: send failed; its final text goes out when finished")
				l.noEdit = true
				return 0, false, nil
			}
			if err != nil {
				return 0, false, fmt.Errorf("live reply, message %d: %w", i+1, err)
			}
			l.msgs = append(l.msgs, liveMsg{id: id, shown: w, next: time.Now().Add(LiveEvery)})
			return 0, false, nil
		}
		m := &l.msgs[i]
		if m.shown == w {
			continue
		}
		if now.Before(m.next) {
			return m.next.Sub(now), false, nil
		}
		id := m.id
		err := l.out.Edit(ctx, l.conv, func(ctx context.Context) error { return l.funcs.Edit(ctx, id, w) })
		if err != nil {
			if ctx.Err() != nil {
				return 0, false, ctx.Err()
			}
			// The message keeps what it shows; once the reply is final its
			// text (and any after it) goes out again as new messages.
			l.out.log.Warn().Str("conv", l.conv.Key()).Int("message", i+1).Msg("live reply: edit failed; its final text goes out as a new message")
			l.stale = append(l.stale, l.msgs[i:]...)
			l.msgs, l.noEdit = l.msgs[:i], true
			return 0, false, nil
		}
		m.shown, m.next = w, time.Now().Add(LiveEvery)
		return 0, false, nil
	}
	if final && len(l.msgs) > len(want) {
		l.out.log.Warn().Str("conv", l.conv.Key()).Int("messages", len(l.msgs)).Int("final", len(want)).Msg("live reply: final text is shorter than what was shown")
	}
	return 0, true, nil
}

// withdraw makes every message sent show note, each edit after its
// message's LiveEvery; the stale ones too, whose text an earlier failed
// edit left as it was.
func (l *Live) withdraw(ctx context.Context, note string) {
	all := slices.Concat(l.msgs, l.stale)
	for i := range all {
		m := &all[i]
		if m.shown == note {
			continue
		}
		if err := Sleep(ctx, time.Until(m.next)); err != nil {
			return
		}
		id := m.id
		if err := l.out.Edit(ctx, l.conv, func(ctx context.Context) error { return l.funcs.Edit(ctx, id, note) }); err != nil {
			if ctx.Err() != nil {
				return
			}
			continue
		}
		m.shown, m.next = note, time.Now().Add(LiveEvery)
	}
}

// sentenceEnd reports whether text has the end of a sentence or a line:
// a newline, or '.', '!', '?' or '…' followed by a space.
func sentenceEnd(text string) bool {
	if strings.Contains(text, "\n") {
		return true
	}
	for _, p := range []string{". ", "! ", "? ", "… "} {
		if strings.Contains(text, p) {
			return true
		}
	}
	return false
}

// sendOne sends one message of at most the limit to conv, in order with
// conv's other sends and edits, paced and retried like a chunk of Reply.
func (o *Outbox) sendOne(ctx context.Context, conv core.Conversation, send func(context.Context) (string, error)) (string, error) {
	release, err := o.order.acquire(ctx, conv.Key())
	if err != nil {
		return "", o.report(ctx, conv, "reply", err)
	}
	defer release()
	var id string
	err = o.deliver(ctx, conv, func(ctx context.Context) (err error) {
		id, err = send(ctx)
		return err
	})
	if err != nil {
		return "", o.report(ctx, conv, "reply", err)
	}
	o.sent.Add(1)
	o.cfg.Metrics.Sent()
	return id, nil
}
