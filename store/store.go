// Package store is gatehouse's persistence: conversation history, token
// usage, approvals, the audit log and gateway cursors, behind the small
// interfaces the core, hitl and the gateways already use. Implementations
// live in sub-packages (sqlite, the embedded default); store/storetest holds
// the contract suites every implementation must pass.
package store

import (
	"context"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/hitl"
)

// UsageStore records token usage per conversation, aggregated per UTC day,
// and reads it back.
type UsageStore interface {
	core.UsageRecorder
	// Usage returns the conversation's usage on the UTC calendar day that
	// contains day; a day without usage is the zero Usage, not an error.
	Usage(ctx context.Context, conv string, day time.Time) (llm.Usage, error)
	// DayUsage returns the usage of all conversations together on the UTC
	// calendar day that contains day; a day without usage is the zero Usage.
	DayUsage(ctx context.Context, day time.Time) (llm.Usage, error)
	// UsageDays returns the total usage of each UTC day from the day that
	// contains since up to today, oldest first; days without usage are
	// left out.
	UsageDays(ctx context.Context, since time.Time) ([]DayUsage, error)
}

// DayUsage is the usage of all conversations together on one UTC day.
type DayUsage struct {
	Day   string // UTC, YYYY-MM-DD
	Usage llm.Usage
}

// Store is everything a persistent implementation offers; cmd/bot wires its
// parts into the core (History, UsageRecorder), hitl (Store, Audit,
// StandingStore) and the gateways (Cursors).
type Store interface {
	core.History
	UsageStore
	hitl.Store
	hitl.Audit
	hitl.StandingStore
	gateways.Cursors
	// Prune deletes conversation history older than the retention period
	// and returns how many messages it removed; a zero retention keeps
	// history for ever. The audit log is append-only and never pruned.
	// Call it at start-up and then daily.
	Prune(ctx context.Context) (int64, error)
	// Close releases the store.
	Close() error
}
