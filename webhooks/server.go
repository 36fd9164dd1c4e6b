package webhooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// Pattern is the path the Server is mounted on (http.ServeMux).
const Pattern = "/hooks/{name}"

// busyRetry is the Retry-After of a 503: a delivery another instance is
// taking, or one this instance could not record or submit.
const busyRetry = 5 * time.Second

// staleThread is how long the claim of an instance that never recorded
// the incident's thread it was opening holds off the others: longer than
// opening a thread takes.
const staleThread = time.Minute

// threadWait bounds how long a delivery waits for another instance to
// open its incident's thread before it is answered 503 (the sender
// retries); threadPoll is how often it looks meanwhile.
const (
	threadWait = 15 * time.Second
	threadPoll = 100 * time.Millisecond
)

// staleClaim is how long a claim of an instance that never finished its
// delivery holds off the sender's retries before another takes it over.
const staleClaim = 2 * time.Minute

// Inbox takes the signals of the deliveries: the Engine.
type Inbox interface {
	Submit(ctx context.Context, s core.Signal) error
}

// Store records deliveries and incident threads (store.Webhooks, shared
// by the instances on one store).
type Store interface {
	ClaimWebhookDelivery(ctx context.Context, hook, id, instance string, stale time.Duration) (record.WebhookClaim, error)
	FinishWebhookDelivery(ctx context.Context, hook, id, instance string) error
	ReleaseWebhookDelivery(ctx context.Context, hook, id, instance string) error
	WebhookThread(ctx context.Context, hook, incident string) (record.WebhookThread, error)
	ClaimWebhookThread(ctx context.Context, hook, incident, instance string, stale time.Duration) (record.WebhookThread, bool, error)
	SetWebhookThread(ctx context.Context, hook, incident, instance string, t record.WebhookThread) (record.WebhookThread, error)
	ReleaseWebhookThread(ctx context.Context, hook, incident, instance string) error
}

// Audit appends to the audit log (hitl.Audit's method).
type Audit interface {
	AppendAudit(ctx context.Context, e record.AuditEntry) error
}

// Gateways finds what a gateway can do for an incident: open a thread
// (core.ThreadStarter, nil when it cannot) and send one line (the
// resolution note, replying to replyTo unless it is "").
type Gateways interface {
	ThreadStarter(gateway string) core.ThreadStarter
	Send(ctx context.Context, conv core.Conversation, replyTo, text string) error
}

// Options configure a Server.
type Options struct {
	Inbox    Inbox
	Store    Store
	Audit    Audit
	Gateways Gateways
	Metrics  *metrics.Registry
	// Instance names this instance in the claims it records.
	Instance string
	Log      zerolog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Server serves POST /hooks/<name>. It implements http.Handler and
// core.StatusReporter.
type Server struct {
	o     Options
	hooks atomic.Pointer[map[string]*entry] // replaced whole by SetHooks
}

// entry is one hook with its limiter and counts (kept across reloads by
// name while the rate is unchanged).
type entry struct {
	hook  Hook
	limit *limiter
	stats stats
}

// New builds a Server over hooks (checked by the configuration).
func New(hooks []Hook, o Options) *Server {
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Server{o: o}
	s.SetHooks(hooks)
	return s
}

// SetHooks replaces the webhooks (a reload): a webhook kept by name keeps
// its counts, and its limiter while its rate is unchanged.
func (s *Server) SetHooks(hooks []Hook) {
	old := s.hooks.Load()
	next := make(map[string]*entry, len(hooks))
	for _, h := range hooks {
		e := &entry{hook: h, limit: newLimiter(h.Rate, s.o.Now())}
		if old != nil {
			if prev, ok := (*old)[h.Name]; ok {
				e.stats.copyFrom(&prev.stats)
				if prev.hook.Rate == h.Rate {
					e.limit = prev.limit
				}
			}
		}
		next[h.Name] = e
	}
	s.hooks.Store(&next)
}

// ServeHTTP answers one delivery; see the package comment for the order.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e := (*s.hooks.Load())[r.PathValue("name")]
	if e == nil {
		s.o.Metrics.Webhook("", "unknown")
		http.Error(w, "no such webhook", http.StatusNotFound)
		return
	}
	h := &e.hook
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := readBounded(w, r, h.MaxBytes)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			s.outcome(e, "too_large")
			http.Error(w, "body over max_bytes", http.StatusRequestEntityTooLarge)
			return
		}
		s.outcome(e, "bad_request")
		http.Error(w, "could not read the body", http.StatusBadRequest)
		return
	}
	if !verified(h, r.Header, body) {
		s.outcome(e, "unauthorized")
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if ok, after := e.limit.take(s.o.Now()); !ok {
		s.outcome(e, "limited")
		w.Header().Set("Retry-After", seconds(after))
		http.Error(w, "rate limited", http.StatusTooManyRequests)
		return
	}
	d, err := parse(h, r.Header, body)
	if err != nil {
		s.outcome(e, "bad_request")
		// The body is not logged: only that it was not a payload.
		s.o.Log.Warn().Str("webhook", h.Name).Int("bytes", len(body)).Msg("webhook: a signed delivery is not a payload of its format")
		http.Error(w, "bad request: "+errBadPayload.Error(), http.StatusBadRequest)
		return
	}
	s.take(r.Context(), w, e, d)
}

// errTooLarge is a body over max_bytes (413).
var errTooLarge = errors.New("body over max_bytes")

// readBounded reads r's body up to max bytes: errTooLarge for a declared
// or actual length over max, before reading or as soon as it is over.
func readBounded(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if r.ContentLength > max {
		return nil, errTooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, errTooLarge
	}
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	return body, nil
}

// outcome counts a delivery's outcome in the metrics and /status.
func (s *Server) outcome(e *entry, outcome string) {
	s.o.Metrics.Webhook(e.hook.Name, outcome)
	e.stats.count(outcome, s.o.Now())
}

// seconds is d rounded up to whole seconds, at least 1, for Retry-After.
func seconds(d time.Duration) string {
	return strconv.FormatInt(max(1, int64((d+time.Second-1)/time.Second)), 10)
}
