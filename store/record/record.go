// Package record holds the records gatehouse persists about approvals: an
// approval and its status, a standing allow, an audit entry and its filter,
// and the errors a store returns for them. It is a leaf: it imports only core
// and the standard library, so that hitl (which makes and reads these records)
// and the store drivers (which keep them) share the types without the drivers
// importing hitl. The interfaces a store implements belong to their consumer
// (hitl.Store, hitl.Audit, hitl.StandingStore) and are listed again, without
// importing hitl, in store.Store.
package record

import (
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
	// Instance names the instance that claimed the approval to run it
	// (store.instance), as a store shared by several instances records it
	// (hitl.SharedStore); empty otherwise.
	Instance string
	// Reminded is when the request was sent again because nobody had
	// answered it (hitl.remind_after); zero while it was not.
	Reminded time.Time
	// Escalated counts the steps of hitl.escalate taken for the request,
	// in their order: 0 while none was.
	Escalated int
}

// Errors returned by the stores of approvals and standing allows. Callers
// tell users what happened from these.
var (
	// ErrNotFound: no approval with that token, or no standing allow
	// with that ID (or tool and arguments).
	ErrNotFound = errors.New("record: not found")
	// ErrNotPending: the approval was already resolved (or expired); the
	// caller reports who resolved it.
	ErrNotPending = errors.New("record: approval is no longer pending")
	// ErrDuplicate: CreateApproval was given a token that is already
	// stored; the caller draws a new token and tries again.
	ErrDuplicate = errors.New("record: duplicate approval token")
)

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
	// "unallowed" (a standing allow or a grant was removed), "granted"
	// and "grant-expired" (a grant, record.Grant), "received" (a file
	// received from chat and saved, Tool "attachment": Args has its path,
	// name, media type, size and SHA-256, Detail "sha256:<hex>"), "paired"
	// and "unpaired" (Tool "pairing": RequestedBy is the identity paired or
	// unpaired, ApprovedBy the approver, Args {"identity": …}),
	// "reconfigured" (Tool "config": a reload changed who may approve, the
	// policy or the profiles; Args {"how": …, "changed": [{"key", "old",
	// "new"}]} with digests of the values, never the values),
	// "skill-enabled" and "skill-disabled" (Tool "skill": Args {"name",
	// "digest"}, RequestedBy and ApprovedBy who decided).
	Outcome string
	Detail  string
	// Token is the approval the entry is about ("" for an entry about no
	// approval: a rule's allow, a file received, a reload, ...), so that
	// /audit TOKEN lists every entry of one request.
	Token string
	// Instance is store.instance of the instance that wrote the entry,
	// on a store several instances share; "" on one that is not (SQLite)
	// and for entries written before schema 19.
	Instance string
}

// AuditFilter selects audit entries; zero fields match everything. Limit,
// when positive, keeps the newest Limit of the matching entries.
type AuditFilter struct {
	Conv    string
	Tool    string
	Outcome string
	Since   time.Time
	Token   string
	Limit   int
}

// Matches reports whether e passes the filter (Limit aside).
func (f AuditFilter) Matches(e AuditEntry) bool {
	return (f.Conv == "" || e.Conv == f.Conv) &&
		(f.Tool == "" || e.Tool == f.Tool) &&
		(f.Outcome == "" || e.Outcome == f.Outcome) &&
		(f.Token == "" || e.Token == f.Token) &&
		(f.Since.IsZero() || !e.At.Before(f.Since))
}

// StandingAllow lets exactly one tool with exactly one arguments JSON text run
// without approval from now on ("/approve TOKEN always"), as long as every
// workspace file its arguments name is as it was when the allow was added.
// Args is compared by string equality: never a prefix, a pattern or a bare
// program name.
type StandingAllow struct {
	// ID numbers the allow for /rules and /unallow; the store assigns it.
	ID      int64
	Tool    string
	Args    string
	AddedBy core.Identity
	Added   time.Time
	// Conv is the conversation whose request was approved with "always".
	Conv string
	// Files binds the allow to the workspace files its arguments name:
	// workspace-relative path → "sha256:<hex>" of the content, "absent",
	// "dir" or "other". When any of them is no longer so, the call is held
	// again. Nil for an allow stored before files were bound: it binds
	// nothing, so every file its arguments name counts as changed.
	Files map[string]string
}

// Checkpoint is the state of the workspace recorded before one changing
// tool call ran: what the call was, for whom, and every entry of the
// workspace then. File contents live outside the store, in a
// content-addressed blob directory; Files name them by SHA-256.
type Checkpoint struct {
	ID   int64
	Conv core.Conversation
	// Tool, Args and CallID are the call that ran after the checkpoint.
	Tool   string
	Args   string
	CallID string
	// RequestedBy is the identity whose message caused the call.
	RequestedBy core.Identity
	// Approval is the token of the approval that let the call run; empty
	// for a call a rule (or a standing allow) let run.
	Approval string
	Created  time.Time
	// Undone is when /undo restored the workspace to this checkpoint or
	// further back; zero while it was not. An undone checkpoint is never
	// undone again.
	Undone   time.Time
	UndoneBy core.Identity
	// Added is how many bytes of blobs this checkpoint added to the blob
	// directory (0 when every content was already there).
	Added int64
	// NoCheckpoint, when not empty, makes this row a marker: the call ran
	// without a checkpoint, for this reason ("big.bin is 20 MiB, over
	// tools.checkpoints.max_file"). A marker has no Files and is never
	// restored to, but a restore to an earlier checkpoint takes its call
	// back too, so /undo counts it when deciding who may undo.
	NoCheckpoint string
	// Files are the workspace's entries, by workspace-relative path with
	// slashes, sorted. Listings (CheckpointFilter) leave them out.
	Files []CheckpointFile
}

// Kinds of a CheckpointFile.
const (
	KindFile    = "file"
	KindDir     = "dir"
	KindSymlink = "symlink"
)

// CheckpointFile is one workspace entry in a checkpoint.
type CheckpointFile struct {
	Path string // workspace-relative, slash-separated
	Kind string // KindFile, KindDir or KindSymlink
	Mode uint32 // permission bits
	Size int64
	// MTime, CTime and Inode let the next checkpoint skip hashing a file
	// that did not change.
	MTime time.Time
	CTime time.Time
	Inode uint64
	// Blob is the hex SHA-256 of a file's content; Target is a symlink's
	// target, as written (never followed).
	Blob   string
	Target string
}

// CheckpointFilter selects checkpoints, newest first.
type CheckpointFilter struct {
	// Conv, when set, keeps only that conversation's checkpoints.
	Conv string
	// Live keeps only checkpoints not undone.
	Live bool
	// After keeps only checkpoints with a greater ID.
	After int64
	// Recorded keeps only real checkpoints, leaving out the markers of
	// calls that ran without one (NoCheckpoint set).
	Recorded bool
	// Limit caps how many are returned; 0 is all.
	Limit int
}
