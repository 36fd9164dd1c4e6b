// Package hitl holds actions for a human: approval tokens, the /approve,
// /deny, /pending and /show commands, the broker that resolves them from any
// gateway, and expiry.
package hitl

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// Status is where an approval is in its life.
type Status string

// The statuses. Pending is the only one that can be approved or denied;
// Executing is claimed (recorded before the action starts).
const (
	StatusPending     Status = "pending"
	StatusDenied      Status = "denied"
	StatusExpired     Status = "expired"
	StatusExecuting   Status = "executing"
	StatusExecuted    Status = "executed"
	StatusFailed      Status = "failed"
	StatusInterrupted Status = "interrupted" // found executing after a crash; never re-run
)

// Approval is a suspended action and what became of it.
type Approval struct {
	Token string
	Conv  core.Conversation
	// RequestedBy is the identity whose message caused the action.
	RequestedBy core.Identity
	Call        llm.ToolCall
	// Digest binds the approval to exactly Call.Name and Call.Args.
	Digest string
	Rule   string
	Reason string

	Created time.Time
	Expires time.Time
	Status  Status
	// ResolvedBy is the approver (or denier); empty while pending.
	ResolvedBy core.Identity
	ResolvedAt time.Time
	// Note is the deny reason, or the outcome summary once executed.
	Note string
}

// Errors returned by a Store. Callers tell users what happened from these.
var (
	// ErrNotFound: no approval with that token.
	ErrNotFound = errors.New("hitl: no such approval")
	// ErrNotPending: the approval was already resolved (or expired); the
	// caller reports who resolved it.
	ErrNotPending = errors.New("hitl: approval is no longer pending")
	// ErrDuplicate: CreateApproval was given a token that is already
	// stored; the caller draws a new token and tries again.
	ErrDuplicate = errors.New("hitl: duplicate approval token")
)

// Store persists approvals. Claim is the exactly-once point: it moves a
// pending, unexpired approval to StatusExecuting (or StatusDenied) in one
// atomic step, so of any number of concurrent claimants exactly one wins.
//
// The contract every implementation must meet is the test
// hitltest.StoreContract.
type Store interface {
	// CreateApproval stores a new approval; a token already stored gives
	// ErrDuplicate.
	CreateApproval(ctx context.Context, a Approval) error
	// Approval returns the approval with the token (already normalised).
	Approval(ctx context.Context, token string) (Approval, error)
	// ClaimApproval moves a pending approval whose Expires is after now to
	// status to (StatusExecuting or StatusDenied), recording by and note.
	// It returns the approval as it is afterwards, or ErrNotPending with the
	// approval as it is, or ErrNotFound.
	ClaimApproval(ctx context.Context, token string, to Status, by core.Identity, note string, now time.Time) (Approval, error)
	// FinishApproval records the end state of a claimed approval
	// (StatusExecuted, StatusFailed, StatusExpired, StatusInterrupted).
	// Executed, Failed and Interrupted apply only to an executing approval;
	// Expired only to a pending one whose Expires is not after now. Any
	// other state gives ErrNotPending, so that of concurrent finishers
	// exactly one succeeds. Note replaces the approval's Note.
	FinishApproval(ctx context.Context, token string, to Status, note string, now time.Time) error
	// Approvals lists approvals with one of the statuses (all approvals
	// when none is given), oldest first.
	Approvals(ctx context.Context, statuses ...Status) ([]Approval, error)
}

// AuditEntry records an approval decision or an executed tool call.
type AuditEntry struct {
	At          time.Time
	Conv        string
	Tool        string
	Args        string // the arguments JSON, possibly shortened
	RequestedBy core.Identity
	// ApprovedBy is who resolved the approval (approver or denier); empty
	// when a rule allowed the call.
	ApprovedBy core.Identity
	// Outcome is "requested", "allowed", "approved", "denied", "expired",
	// "executed", "failed", "interrupted", "refused" (an attempt to resolve
	// that was turned down, or an action that did not match its digest),
	// "unallowed" (a standing allow was removed).
	Outcome string
	Detail  string
}

// AuditFilter selects audit entries; zero fields match everything. Limit,
// when positive, keeps the newest Limit of the matching entries.
type AuditFilter struct {
	Conv    string
	Tool    string
	Outcome string
	Since   time.Time
	Limit   int
}

// Audit is the append-only audit log. QueryAudit returns entries oldest
// first.
type Audit interface {
	AppendAudit(ctx context.Context, e AuditEntry) error
	QueryAudit(ctx context.Context, f AuditFilter) ([]AuditEntry, error)
}
