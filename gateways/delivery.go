package gateways

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// DefaultRetryFor is how long a request is retried after its first failure
// when OutboxConfig.RetryFor is zero: long enough to ride out a short
// outage.
const DefaultRetryFor = 5 * time.Minute

// OutboxConfig is one platform's delivery: its message limit, its rate
// limits, its retry policy and how to read its errors.
type OutboxConfig struct {
	// Limit is the longest chunk, in Measure's unit (required).
	Limit int
	// Measure is the platform's length unit; it must be additive (see
	// Split). Default utf8.RuneCountInString; a platform that counts UTF-16 units uses UTF16Len.
	Measure func(string) int
	// Pace is the platform's rate limits; every attempt, a send or an
	// edit, a first try or a retry, counts toward them.
	Pace Limits
	// Backoff spaces retries after Transient failures.
	Backoff Backoff
	// RetryFor bounds the retries of one request: a failure RetryFor or
	// more after its first one is final, and so is a retry-after that
	// would end past that deadline; default DefaultRetryFor.
	RetryFor time.Duration
	// Classify says what a failed attempt's error means (required).
	Classify func(error) Failure
	// Log receives the retries (debug) and the final failures (error).
	Log zerolog.Logger
	// Metrics records the Outbox's sends, edits, retries and final
	// failures under the gateway's label (Deps.Metrics.Delivery(name));
	// the zero value records nothing.
	Metrics metrics.Delivery
	// Shared, when set (Deps.Shared: the store is shared by several
	// instances), makes Pace hold for all the instances together, through
	// send slots reserved in the store on top of this Outbox's own pacer,
	// and writes each reply to the store's outbox before it is sent, so
	// that another instance sends it if this one dies first.
	Shared *Shared
	// Sender is the key of the token the Outbox sends as, the same on
	// every instance: the gateway's name and the bot's id
	// ("<gateway>:<bot id>"). Required with Shared.
	Sender string
	// SlotLateness, with Shared, is how late a request may leave after its
	// shared slot before another slot is reserved for it; 0 means
	// SlotLateness. (A test that counts the store's writes of the
	// per-message path sets it past any lateness of a loaded machine.)
	SlotLateness time.Duration
}

// Chunk is one piece of a reply, as the Outbox hands it to SendFunc.
type Chunk struct {
	Text  string // at most OutboxConfig.Limit long, never blank
	Index int    // from 0
	Count int    // the reply's number of chunks
}

// Last reports whether c is the reply's last chunk (where buttons go).
func (c Chunk) Last() bool { return c.Index == c.Count-1 }

// SendFunc makes one attempt at sending a chunk: one API request, no
// retries of its own. It returns the platform's id of the sent message.
// It may keep state between attempts (e.g. to try another form after a
// failure classified RetryAfter with no pause).
type SendFunc func(ctx context.Context, c Chunk) (id string, err error)

// EditFunc makes one attempt at editing a message the gateway sent: one
// API request, no retries of its own.
type EditFunc func(ctx context.Context) error

// DeliveryStats are an Outbox's counters since it was made.
type DeliveryStats struct {
	Sent    uint64 // chunks delivered
	Edited  uint64 // edits applied
	Retried uint64 // attempts made again after a failure
	Failed  uint64 // replies and edits finally not delivered (not counting shutdowns)
}

// DeliveryReporter is an optional ability of a gateway: the counters of
// its outbound delivery, for the app to read.
type DeliveryReporter interface {
	DeliveryStats() DeliveryStats
}

// Outbox is the outbound delivery layer every platform adapter shares:
// it splits replies, keeps each conversation's sends and edits in order
// (one at a time, first come first served; other conversations are not
// held up), paces every attempt within the platform's limits, retries by
// the adapter's verdict within a deadline, and logs and counts what
// finally cannot be delivered. The adapter supplies only one attempt at a
// send or an edit and the meaning of its errors. An Outbox is safe for
// concurrent use.
type Outbox struct {
	cfg    OutboxConfig
	log    zerolog.Logger
	pacer  *Pacer
	order  *convQueue
	shared *sharing // nil: this instance alone

	sent, edited, retried, failed atomic.Uint64
}

// NewOutbox checks cfg, fills in its defaults and returns an Outbox.
func NewOutbox(cfg OutboxConfig) (*Outbox, error) {
	if cfg.Limit <= 0 {
		return nil, fmt.Errorf("gateways: outbox: limit %d: want a positive length", cfg.Limit)
	}
	if cfg.Classify == nil {
		return nil, errors.New("gateways: outbox: no Classify: the outbox cannot tell a retryable error")
	}
	if cfg.Measure == nil {
		cfg.Measure = utf8.RuneCountInString
	}
	if cfg.RetryFor <= 0 {
		cfg.RetryFor = DefaultRetryFor
	}
	if err := checkShared(cfg.Shared, cfg.Sender); err != nil {
		return nil, err
	}
	o := &Outbox{cfg: cfg, log: cfg.Log, pacer: NewPacer(cfg.Pace), order: newConvQueue()}
	if cfg.Shared != nil {
		o.shared = &sharing{Shared: *cfg.Shared, sender: cfg.Sender}
		if cfg.Shared.Journal != nil {
			cfg.Shared.Journal.Serve(cfg.Sender)
		}
	}
	return o, nil
}

// Split cuts text into the chunks Reply sends: at most the limit each,
// with Split's boundaries and fences, blank chunks dropped (platforms
// refuse empty messages).
func (o *Outbox) Split(text string) []string {
	chunks := Split(text, o.cfg.Limit, o.cfg.Measure)
	out := chunks[:0]
	for _, c := range chunks {
		if strings.TrimSpace(c) != "" {
			out = append(out, c)
		}
	}
	return out
}

// Reply delivers text to conv: split, each chunk sent with send in order,
// after every earlier send or edit to conv. It returns the ids of the
// messages sent. When a chunk finally cannot be delivered it logs that
// with the conversation key, counts it, sends none of the later chunks
// (they would arrive out of order) and returns the error. A blank text
// sends nothing.
//
// With Shared, the reply is first written to the store's outbox and each
// accepted chunk recorded; under ResumeReply (another instance's reply)
// the chunks already accepted are skipped.
func (o *Outbox) Reply(ctx context.Context, conv core.Conversation, text string, send SendFunc) ([]string, error) {
	return o.reply(ctx, conv, text, send, true)
}

// ReplyPrivate delivers text like Reply but never writes it to the
// store's outbox: an answer only its user sees (an ephemeral message, a
// slash command's answer), which another instance could only post to
// everyone in the conversation. If this instance dies before sending it,
// it is lost, as on one instance.
func (o *Outbox) ReplyPrivate(ctx context.Context, conv core.Conversation, text string, send SendFunc) ([]string, error) {
	return o.reply(ctx, conv, text, send, false)
}

// reply is Reply, writing the reply to the outbox when keep is true.
func (o *Outbox) reply(ctx context.Context, conv core.Conversation, text string, send SendFunc, keep bool) ([]string, error) {
	chunks := o.Split(text)
	if len(chunks) == 0 {
		return nil, nil
	}
	var e *entry
	if keep {
		var taken bool
		if e, taken = o.journal(ctx, conv, text); taken {
			return nil, nil // another instance's to send: sent once, not here
		}
	}
	from := 0
	if e != nil {
		from = min(e.done, len(chunks))
	}
	release, err := o.order.acquire(ctx, conv.Key())
	if err != nil {
		e.end(ctx, from, err)
		return nil, o.report(ctx, conv, "reply", err)
	}
	defer release()
	ids := make([]string, 0, len(chunks))
	if from == len(chunks) {
		e.end(ctx, from, nil)
	}
	for i := from; i < len(chunks); i++ {
		c := Chunk{Text: chunks[i], Index: i, Count: len(chunks)}
		var id string
		err := o.deliver(ctx, conv, func(ctx context.Context) (err error) {
			id, err = send(ctx, c)
			return err
		})
		if err != nil {
			e.end(ctx, i, err)
			return ids, o.report(ctx, conv, "reply", fmt.Errorf("chunk %d of %d: %w", i+1, len(chunks), err))
		}
		e.progress(ctx, i+1, i+1 == len(chunks), false)
		o.sent.Add(1)
		o.cfg.Metrics.Sent()
		ids = append(ids, id)
	}
	return ids, nil
}

// Edit applies edit to a message in conv, in order with conv's sends and
// edits, paced and retried like a send. A final failure is logged with the
// conversation key, counted and returned.
func (o *Outbox) Edit(ctx context.Context, conv core.Conversation, edit EditFunc) error {
	release, err := o.order.acquire(ctx, conv.Key())
	if err != nil {
		return o.report(ctx, conv, "edit", err)
	}
	defer release()
	if err := o.deliver(ctx, conv, edit); err != nil {
		return o.report(ctx, conv, "edit", err)
	}
	o.edited.Add(1)
	o.cfg.Metrics.Edited()
	return nil
}

// Paused reports whether a server's retry-after pause holds deliveries to
// conv now (Pacer.Paused).
func (o *Outbox) Paused(conv core.Conversation) bool { return o.pacer.Paused(conv.Chat) }

// Stats returns the Outbox's counters.
func (o *Outbox) Stats() DeliveryStats {
	return DeliveryStats{Sent: o.sent.Load(), Edited: o.edited.Load(), Retried: o.retried.Load(), Failed: o.failed.Load()}
}

// deliver makes attempts at one request until one succeeds, the adapter
// calls a failure permanent, the retry deadline passes or ctx ends.
func (o *Outbox) deliver(ctx context.Context, conv core.Conversation, attempt func(context.Context) error) error {
	var deadline time.Time // set at the first failure
	backoffs := 0
	again := false // the last verdict was "retry at once"
	for n := 1; ; n++ {
		// This instance's own pacer first, then the shared slot, the last
		// wait before the request leaves: another instance's request is
		// timed by the slots alone, so nothing may wait between a slot and
		// its send (the two-instance pacing test in cmd/bot saw two replies
		// within one second in one chat, under load, when the own pacer
		// waited there). Shared, the own pacer counts the request from its
		// end: the platform receives it between its start and its end, so
		// this instance's requests are a window apart there. Timed by
		// their reservations alone they were not: in a burst the first
		// requests wait longest (behind the burst's own reservations, turns
		// and requests), the later ones least, and the later ones caught up
		// with the first (35 in one second at the fake, one instance, a
		// load of 14 on 2 cores, with SharedMargin).
		ended, err := o.pacer.Start(ctx, conv.Chat)
		if err != nil {
			return err
		}
		if err := o.reserve(ctx, conv.Chat); err != nil {
			ended()
			return err
		}
		err = attempt(ctx)
		if o.shared != nil {
			ended()
		}
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		f := o.cfg.Classify(err)
		if f.Verdict == Permanent {
			return fmt.Errorf("not retried (%s): %w", f.Verdict, err)
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(o.cfg.RetryFor)
		}
		left := deadline.Sub(now)
		if left <= 0 {
			return fmt.Errorf("giving up after %d attempts over %s: %w", n, o.cfg.RetryFor, err)
		}
		o.retried.Add(1)
		o.cfg.Metrics.Retried()
		if f.Verdict == RetryAfter && f.After <= 0 && again {
			f.Verdict = Transient // a second "at once" in a row backs off: no spinning
		}
		again = f.Verdict == RetryAfter && f.After <= 0
		if f.Verdict == RetryAfter {
			// The pause holds the chat's later requests (and typing) even
			// when this one gives up: sending meanwhile would only
			// lengthen it.
			if f.Global {
				o.pacer.PauseAll(f.After)
			} else {
				o.pacer.Pause(conv.Chat, f.After)
			}
			if f.After > left {
				return fmt.Errorf("giving up after %d attempts: asked to wait %s, past the %s retry deadline: %w", n, f.After, o.cfg.RetryFor, err)
			}
			o.log.Debug().Str("conv", conv.Key()).Int("attempt", n).Dur("retry_after", f.After).Bool("global", f.Global).
				Err(err).Msg("rate limited; pausing")
			continue
		}
		wait := min(o.cfg.Backoff.Next(backoffs), left)
		backoffs++
		o.log.Debug().Str("conv", conv.Key()).Int("attempt", n).Dur("wait", wait).Err(err).Msg("delivery failed; retrying")
		if err := Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// report logs a reply or edit that was finally not delivered, with the
// conversation key, and counts it; a shutdown (ctx ended) is logged as a
// warning and not counted. It returns err.
func (o *Outbox) report(ctx context.Context, conv core.Conversation, what string, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		o.log.Warn().Str("conv", conv.Key()).Err(err).Msg(what + " not delivered: shutting down")
		return err
	}
	o.failed.Add(1)
	o.cfg.Metrics.Failed()
	o.log.Error().Str("conv", conv.Key()).Err(err).Msg(what + " not delivered")
	return err
}
