// Package hitl holds actions for a human: approval tokens, the /approve,
// /deny, /pending and /show commands, the broker that resolves them from any
// gateway, and expiry.
package hitl

import (
	"context"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// Store persists approvals. Claim is the exactly-once point: it moves a
// pending, unexpired approval to record.StatusExecuting (or
// record.StatusDenied) in one atomic step, so of any number of concurrent
// claimants exactly one wins.
//
// The contract every implementation must meet is the test
// hitltest.StoreContract.
type Store interface {
	// CreateApproval stores a new approval; a token already stored gives
	// record.ErrDuplicate.
	CreateApproval(ctx context.Context, a record.Approval) error
	// Approval returns the approval with the token (already normalised).
	Approval(ctx context.Context, token string) (record.Approval, error)
	// ClaimApproval moves a pending approval whose Expires is after now to
	// status to (record.StatusExecuting or record.StatusDenied), recording
	// by and note. It returns the approval as it is afterwards, or
	// record.ErrNotPending with the approval as it is, or record.ErrNotFound.
	ClaimApproval(ctx context.Context, token string, to record.Status, by core.Identity, note string, now time.Time) (record.Approval, error)
	// FinishApproval records the end state of a claimed approval
	// (record.StatusExecuted, StatusFailed, StatusExpired or
	// StatusInterrupted).
	// Executed, Failed and Interrupted apply only to an executing approval;
	// Expired only to a pending one whose Expires is not after now. Any
	// other state gives record.ErrNotPending, so that of concurrent finishers
	// exactly one succeeds. Note replaces the approval's Note.
	FinishApproval(ctx context.Context, token string, to record.Status, note string, now time.Time) error
	// Approvals lists approvals with one of the statuses (all approvals
	// when none is given), oldest first.
	Approvals(ctx context.Context, statuses ...record.Status) ([]record.Approval, error)
	// MarkReminded sets Reminded to now on a pending approval whose
	// Expires is after now and that was not reminded; any other approval
	// gives record.ErrNotPending (an unknown token record.ErrNotFound).
	// One conditional update: of concurrent callers exactly one succeeds,
	// and only it sends the reminder.
	MarkReminded(ctx context.Context, token string, now time.Time) error
	// MarkEscalated moves Escalated from step to step+1 on a pending
	// approval whose Expires is after now and whose Escalated is step;
	// any other approval gives record.ErrNotPending (an unknown token
	// record.ErrNotFound). Of concurrent callers exactly one succeeds.
	MarkEscalated(ctx context.Context, token string, step int, now time.Time) error
}

// Audit is the append-only audit log. QueryAudit returns entries oldest
// first.
type Audit interface {
	AppendAudit(ctx context.Context, e record.AuditEntry) error
	QueryAudit(ctx context.Context, f record.AuditFilter) ([]record.AuditEntry, error)
}
