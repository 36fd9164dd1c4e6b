package gateways

import (
	"fmt"
	"time"
)

// Verdict is what a failed attempt means for the next one. An adapter
// gives one for each error through OutboxConfig.Classify; the Outbox does
// what the verdict documents. It never inspects platform errors itself.
type Verdict uint8

const (
	// Transient: the same request may well succeed later (a 5xx, a
	// network error, a timeout, a malformed answer). The Outbox retries
	// with exponential backoff and jitter until OutboxConfig.RetryFor has
	// passed since the request's first failure. The zero Failure is
	// Transient.
	Transient Verdict = iota
	// RetryAfter: the platform asked for a pause (HTTP 429 with
	// retry-after, Failure.After). The Outbox pauses the chat, or every
	// chat when Failure.Global, for After, makes no request to it before,
	// and then retries; if the pause would end past the retry deadline it
	// gives up at once. An After of 0 retries at once (still paced): an
	// adapter uses it to try another form of the same request; a second
	// such verdict in a row is taken as Transient, so nothing spins.
	RetryAfter
	// Permanent: repeating the request would fail the same way (a bad
	// request, a chat the bot cannot write to, a message that no longer
	// exists). The Outbox does not retry it: it reports the failure.
	Permanent
)

// String returns the verdict's name.
func (v Verdict) String() string {
	switch v {
	case Transient:
		return "transient"
	case RetryAfter:
		return "retry-after"
	case Permanent:
		return "permanent"
	}
	return fmt.Sprintf("Verdict(%d)", v)
}

// Failure is an adapter's classification of a failed attempt.
type Failure struct {
	Verdict Verdict
	// After is the pause the platform asked for (RetryAfter).
	After time.Duration
	// Global marks a pause that holds every chat, not only the one the
	// request went to (RetryAfter).
	Global bool
}
