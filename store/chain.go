package store

import (
	"context"

	"github.com/gatehouse-bot/gatehouse/store/record"
)

// AuditChain reads the audit log as the hash chain its appends build
// (store/auditchain documents the chain; `bot audit verify` walks it).
type AuditChain interface {
	// AuditAnchor returns where the chain begins and its recorded head.
	AuditAnchor(ctx context.Context) (record.AuditAnchor, error)
	// WalkAudit calls fn with every audit row in id order (the rows
	// before the anchor included), stopping at fn's first error, which
	// it returns.
	WalkAudit(ctx context.Context, fn func(record.AuditRow) error) error
}
