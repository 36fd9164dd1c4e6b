// Package store is gatehouse's persistence: conversation history, token
// usage, approvals, the audit log, gateway cursors and memory, behind the small
// interfaces the core, hitl and the gateways already use. Implementations
// live in sub-packages (sqlite, the embedded default); store/storetest holds
// the contract suites every implementation must pass.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// ErrNotCreated is matched (errors.Is) by the error of a read-only open of
// a store that does not exist yet: the bot creates it on its first run, so
// for `bot audit` it means nothing has been recorded yet.
var ErrNotCreated = errors.New("store: not created yet")

// ErrSchemaOld is matched (errors.Is) by the error of a read-only open of
// a store written by an older gatehouse: the bot upgrades it when it
// starts, and until then this build cannot read it.
var ErrSchemaOld = errors.New("store: schema older than this gatehouse")

// ErrLocked is matched (errors.Is) by the error of opening a store for
// the bot while another gatehouse instance runs on it. The caller stops;
// retrying is pointless while that instance runs.
var ErrLocked = errors.New("another gatehouse instance holds it")

// ErrSchemaTooNew is matched (errors.Is) by the error of opening a store
// written by a newer gatehouse; the store is left untouched. The caller
// tells the user to upgrade gatehouse.
var ErrSchemaTooNew = errors.New("database schema is newer than this gatehouse")

// SchemaTooNewError is the error of opening a store whose schema version
// is newer than this build's; it matches ErrSchemaTooNew.
type SchemaTooNewError struct {
	Database int // the store's schema version
	Known    int // the newest version this build knows
}

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than this gatehouse (%d); upgrade gatehouse",
		e.Database, e.Known)
}

// Is makes errors.Is(err, ErrSchemaTooNew) true.
func (e *SchemaTooNewError) Is(target error) bool { return target == ErrSchemaTooNew }

// SchemaOldError is the error of a read-only open of a store whose schema
// version is older than this build's; it matches ErrSchemaOld.
type SchemaOldError struct {
	Database int // the store's schema version
	Known    int // the version this build writes
}

func (e *SchemaOldError) Error() string {
	return fmt.Sprintf("database schema version %d is older than this gatehouse (%d); run the bot once to upgrade it",
		e.Database, e.Known)
}

// Is makes errors.Is(err, ErrSchemaOld) true.
func (e *SchemaOldError) Is(target error) bool { return target == ErrSchemaOld }

// UsageStore records token usage and its cost (llm.Usage.CostUSD, priced
// when recorded) per conversation, aggregated per UTC day, and reads it
// back.
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

// Approvals keeps approvals: the methods of hitl.Store, listed here so that
// store packages need not import hitl (hitl.Store documents the contract,
// and hitl/hitltest.StoreContract checks it).
type Approvals interface {
	CreateApproval(ctx context.Context, a record.Approval) error
	Approval(ctx context.Context, token string) (record.Approval, error)
	ClaimApproval(ctx context.Context, token string, to record.Status, by core.Identity, note string, now time.Time) (record.Approval, error)
	FinishApproval(ctx context.Context, token string, to record.Status, note string, now time.Time) error
	Approvals(ctx context.Context, statuses ...record.Status) ([]record.Approval, error)
}

// Audit is the append-only audit log (hitl.Audit): QueryAudit returns the
// entries matching the filter, oldest first.
type Audit interface {
	AppendAudit(ctx context.Context, e record.AuditEntry) error
	QueryAudit(ctx context.Context, f record.AuditFilter) ([]record.AuditEntry, error)
}

// Standing keeps standing allows: the methods of hitl.StandingStore
// (hitl/hitltest.StandingContract checks them).
type Standing interface {
	AddStandingAllow(ctx context.Context, s record.StandingAllow) (record.StandingAllow, error)
	StandingAllows(ctx context.Context) ([]record.StandingAllow, error)
	RemoveStandingAllow(ctx context.Context, id int64) (record.StandingAllow, error)
	StandingAllowFor(ctx context.Context, tool, args string) (record.StandingAllow, error)
}

// Cursors persists small per-gateway positions: the methods of
// gateways.Cursors. Cursor returns "" for a key never set.
type Cursors interface {
	Cursor(ctx context.Context, key string) (string, error)
	SetCursor(ctx context.Context, key, value string) error
}

// The bounds of Memory: a remembered key is kept for MemoryKeep after its
// latest Remember, at most MemoryMax keys a scope (Prune forgets the
// oldest past it), and a scope or key longer than MaxMemoryKey bytes is
// refused.
const (
	MemoryKeep   = 90 * 24 * time.Hour
	MemoryMax    = 100_000
	MaxMemoryKey = 256
)

// Memory remembers keys by scope across restarts: the methods of
// gateways.Memory (store/storetest.MemoryContract checks them).
// Remembered is false for a key never remembered, or pruned; Remember of
// a remembered key renews it.
type Memory interface {
	Remember(ctx context.Context, scope, key string) error
	Remembered(ctx context.Context, scope, key string) (bool, error)
}

// Checkpoints is the index of workspace checkpoints: the methods of
// checkpoint.Index (checkpoint), listed here so that store packages
// need not import it. The blobs the files name live beside the store, in a
// directory the checkpoint package owns, or in the shared database
// (CheckpointBlobStore).
type Checkpoints interface {
	AddCheckpoint(ctx context.Context, c record.Checkpoint) (int64, error)
	Checkpoints(ctx context.Context, f record.CheckpointFilter) ([]record.Checkpoint, error)
	Checkpoint(ctx context.Context, id int64) (record.Checkpoint, error)
	LatestCheckpoint(ctx context.Context) (record.Checkpoint, error)
	MarkUndone(ctx context.Context, from int64, by core.Identity, at time.Time) (int64, error)
	DeleteCheckpoints(ctx context.Context, ids ...int64) error
	CheckpointBlobs(ctx context.Context) (map[string]int64, error)
}

// CheckpointBlobStore keeps the blobs of checkpoints in a database several
// instances share, so that /undo works from any of them: the methods of
// checkpoint.BlobTable (checkpoint), listed here so that store
// packages need not import it. A store that is not shared (SQLite) leaves
// the blobs to the checkpoint package's directory and need not implement
// it. Each blob is keyed by sum, the hex SHA-256 of its content, and
// carries the time it was last stored or found in use.
type CheckpointBlobStore interface {
	// PutCheckpointBlob stores content as the blob sum unless it is
	// stored already (then it only marks it in use now), and reports
	// whether it added it.
	PutCheckpointBlob(ctx context.Context, sum string, content []byte) (added bool, err error)
	// CheckpointBlob returns the blob sum, or an error matching
	// record.ErrNotFound.
	CheckpointBlob(ctx context.Context, sum string) ([]byte, error)
	// TouchCheckpointBlobs marks the blobs of sums that are stored in use
	// now and returns them.
	TouchCheckpointBlobs(ctx context.Context, sums []string) ([]string, error)
	// CollectCheckpointBlobs deletes the blobs not in keep and not in use
	// within idle of now, and returns how many it deleted.
	CollectCheckpointBlobs(ctx context.Context, keep []string, idle time.Duration) (int64, error)
	// CheckpointBlobsSize is the bytes of all the blobs.
	CheckpointBlobsSize(ctx context.Context) (int64, error)
}

// Server is implemented by a store on a database server: `bot doctor`
// shows the server's version.
type Server interface {
	// ServerVersion is the server's product and version, e.g.
	// "PostgreSQL 15.18".
	ServerVersion(ctx context.Context) (string, error)
}

// ScheduleSlots makes each slot of a schedule run once among all the
// instances that share the store (schedule's SlotClaimer).
type ScheduleSlots interface {
	// ClaimScheduleSlot records that instance runs the schedule name's slot
	// (the time the run was due) and reports true; of any number of
	// callers, concurrent or not, for one name and slot exactly one gets
	// true, the others false. Prune forgets slots older than SlotKeep.
	ClaimScheduleSlot(ctx context.Context, name string, slot time.Time, instance string) (bool, error)
}

// SlotKeep is how long a claimed schedule slot is kept before Prune
// deletes it: long past the time any instance could still be claiming it.
const SlotKeep = 24 * time.Hour

// Leases are named, expiring locks among the instances sharing the store:
// a connection a platform allows once per token (a long poll for updates) is
// run by the lease's holder only. Times are the store's clock.
type Leases interface {
	// AcquireLease takes the lease name for holder until ttl from now if it
	// is free or expired, or renews it if holder holds it, and reports
	// whether holder holds it now; held by another and unexpired, it is
	// left alone and held is false. ttl must be positive.
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (held bool, err error)
	// ReleaseLease frees the lease at once if holder holds it; otherwise
	// it does nothing.
	ReleaseLease(ctx context.Context, name, holder string) error
	// LeaseHolders lists the leases held now (unexpired), by name.
	LeaseHolders(ctx context.Context) ([]Lease, error)
}

// Sharer is implemented by a store that several instances may share (a
// database server): Shared reports whether this one is. Receivers the
// platform allows once per token then run under a lease. A store without
// it (SQLite: one process, which its lock file guarantees) is not shared.
type Sharer interface {
	Shared() bool
}

// SendSlots paces requests to a platform among all the instances sharing
// the store (gateways.SlotReserver, through app): a platform's
// limit per token holds for them together. Each limit is a sliding window
// as gateways.Pacer keeps it in memory: at most N requests in any window of
// length Per under its key.
type SendSlots interface {
	// ReserveSend reserves the earliest time, not before now (the store's
	// clock), at which one more request fits every limit given, counting
	// the requests reserved before under each key, and records it under
	// each key. It returns how long from now that time is: the caller
	// makes its request then. Every limit must have N > 0 and Per > 0.
	ReserveSend(ctx context.Context, limits ...SendLimit) (time.Duration, error)
}

// SendLimit is one limit of a reservation: at most N requests in any
// window of length Per under Key.
type SendLimit struct {
	Key string
	N   int
	Per time.Duration
}

// SendSlotKeep is how long a send slot key with no reservation is kept
// before Prune forgets it: far longer than any platform's window.
const SendSlotKeep = time.Hour

// Outbox keeps replies durable among the instances sharing the store
// (gateways.Journal, through app): a reply is written before it is
// sent and marked once the platform accepted it, so that one whose
// composer died is sent by another instance with the same sender.
type Outbox interface {
	// AddReply writes r (its ID, Done, State and times ignored) as pending,
	// composed by r.Composer now, and returns its id; ErrReplyExists when
	// r.InboxID is set and a reply of that inbox entry was written.
	AddReply(ctx context.Context, r OutboxReply) (int64, error)
	// ReplyDone records that the platform accepted the first done chunks
	// of reply id; state ReplySent or ReplyFailed ends it (it is never
	// sent again), ReplyPending keeps it open.
	ReplyDone(ctx context.Context, id int64, done int, state string) error
	// ClaimReplies hands instance the pending replies of sender, at most
	// max, oldest first, whose composer has no heartbeat (Instances)
	// within ttl of now, or which instance itself composed before started
	// (a previous run under the same name); each becomes instance's, so
	// that of concurrent callers only one gets it.
	ClaimReplies(ctx context.Context, sender, instance string, ttl time.Duration, started time.Time, max int) ([]OutboxReply, error)
}

// The states of an OutboxReply.
const (
	ReplyPending = "pending"
	ReplySent    = "sent"
	ReplyFailed  = "failed"
)

// OutboxKeep is how long a reply is kept after its last change before
// Prune deletes it, whatever its state.
const OutboxKeep = 24 * time.Hour

// OutboxReply is a reply in the outbox.
type OutboxReply struct {
	ID       int64
	Sender   string // gateway and token id: who may send it ("<gateway>:<bot id>")
	Gateway  string
	Chat     string
	Thread   string
	Text     string
	Composer string // the instance sending it
	Done     int    // chunks the platform accepted
	State    string
	InboxID  int64 // the inbox entry whose turn it answers (InboxReplies); 0 none
}

// Inbox is the durable inbox of instances sharing the store: a received
// message is put before the platform is told it arrived, and any instance
// then claims it and runs its turn. One conversation's entries are claimed
// one at a time, oldest first: only the oldest pending entry of a
// conversation is ever claimable, and only while no live claim holds it.
// A claim lasts until its expiry (the store's clock), which the holder
// renews; an expired claim is taken over by the next claimer. app
// type-asserts it only on a shared store (Sharer).
type Inbox interface {
	// PutInbox writes e as pending (e.ID, Stage and Received are ignored)
	// unless an entry with its Gateway and Key exists: a redelivery is a
	// no-op, added false (and id 0). A positive reserve keeps the entry
	// for e.Receiver until reserve from now (see ClaimInbox); 0 leaves it
	// to any claimer.
	PutInbox(ctx context.Context, e InboxEntry, reserve time.Duration) (id int64, added bool, err error)
	// ClaimInbox claims for holder, until ttl from now, the oldest entry
	// among the pending entries that are their conversation's oldest, of
	// a conversation on one of gateways, that nobody holds: unclaimed and
	// not reserved for another receiver, or whose claim or reservation has
	// expired, or reserved for holder itself. ok is false when there is
	// none. Of concurrent claimers, at most one gets a conversation.
	ClaimInbox(ctx context.Context, holder string, gateways []string, ttl time.Duration) (e InboxEntry, ok bool, err error)
	// RenewInbox extends to ttl from now holder's claims and reservations
	// of the pending entries ids; the others are left alone.
	RenewInbox(ctx context.Context, holder string, ids []int64, ttl time.Duration) error
	// SetInboxStage records how far the turn of entry id got; it fails
	// with ErrNotHeld unless holder holds an unexpired claim of it.
	SetInboxStage(ctx context.Context, id int64, holder string, stage int) error
	// FinishInbox marks entry id done (it stays, so that a redelivery is
	// still a no-op, until Prune forgets it after InboxKeep); it fails
	// with ErrNotHeld unless holder holds a claim of it.
	FinishInbox(ctx context.Context, id int64, holder string) error
	// ReleaseInbox gives holder's claim of entry id back at once (its
	// stage kept), for another claimer.
	ReleaseInbox(ctx context.Context, id int64, holder string) error
	// CancelInbox asks the holder of conv's claimed entry (a live claim)
	// to stop its turn (/cancel typed to another instance) and reports
	// whether there was one; the holder learns of it from WatchInbox
	// (InboxCancel) and CancelledInbox. A later claim of the entry (a
	// takeover) clears the request.
	CancelInbox(ctx context.Context, conv string) (bool, error)
	// CancelledInbox lists holder's pending entries whose turn was asked
	// to stop.
	CancelledInbox(ctx context.Context, holder string) ([]int64, error)
	// WatchInbox calls wake whenever an entry may have become claimable
	// on any instance (put, finished, released; what is "") or a turn
	// was asked to stop (what is InboxCancel), until ctx ends or the
	// connection fails; callers also poll, a wake can be lost.
	WatchInbox(ctx context.Context, wake func(what string)) error
}

// InboxReplies links a turn's reply to its inbox entry, so that the reply
// is sent once across instances: its text is recorded with the stage
// "replied" before the reply is handed over, and an Outbox row names the
// entry it answers, at most one row per entry. An instance that takes the
// turn over at that stage hands the recorded reply over again: if the
// first instance wrote it to the outbox (whose loop sends it), AddReply
// fails with ErrReplyExists and it is not sent again; if that instance
// died before, this one writes and sends it.
type InboxReplies interface {
	// SetInboxReply records, as SetInboxStage does (ErrNotHeld unless
	// holder holds a live claim), stage and the text of the reply of
	// entry id's turn.
	SetInboxReply(ctx context.Context, id int64, holder string, stage int, text string) error
	// InboxReply returns the reply text recorded for entry id, "" none.
	InboxReply(ctx context.Context, id int64) (string, error)
}

// ErrReplyExists is matched (errors.Is) by the error of Outbox.AddReply
// for a reply whose InboxID another reply already answers.
var ErrReplyExists = errors.New("store: the inbox entry's reply is already in the outbox")

// ErrNotHeld is matched (errors.Is) by the error of an inbox operation on
// an entry the caller no longer holds: its claim expired and another
// instance may have taken it over.
var ErrNotHeld = errors.New("store: inbox entry not held")

// InboxResetter makes /reset hold across the instances sharing the
// store: the conversation's history is forgotten and the turns of it
// that other instances run at that moment are marked, by entry, so that
// their holders stop them and keep nothing of them. A turn claimed after
// the reset is never marked. cluster type-asserts it.
type InboxResetter interface {
	// ResetInbox, in one transaction, forgets conv's history and marks
	// conv's entries claimed (a live claim) by an instance other than
	// holder; it wakes the instances with InboxCancel and reports whether
	// an entry was marked. The marked entries' rows stay locked until the
	// history is gone, so none of them is finished in between.
	ResetInbox(ctx context.Context, conv, holder string) (bool, error)
	// InboxResets returns those of ids that ResetInbox marked.
	InboxResets(ctx context.Context, ids []int64) ([]int64, error)
}

// InboxCancel is what WatchInbox reports when a turn was asked to stop.
const InboxCancel = "cancel"

// InboxKeep is how long a done inbox entry is kept (a redelivery within it
// is still recognised) before Prune deletes it.
const InboxKeep = 24 * time.Hour

// InboxEntry is one received message in the inbox.
type InboxEntry struct {
	ID       int64
	Gateway  string // with Key, the platform's identity of the message
	Key      string
	Conv     string // the conversation's key: its entries run in order
	Data     []byte // the message, encoded by its user
	Files    int    // attachments the receiver holds in memory
	Receiver string // the instance that received it
	Stage    int    // how far a turn got, as its user counts; 0 not started
	Received time.Time
}

// Lease is a held lease.
type Lease struct {
	Name    string
	Holder  string
	Expires time.Time // UTC
}

// Instances registers the running instances sharing the store, each by a
// heartbeat, for /status and bot doctor.
type Instances interface {
	// Heartbeat records that the instance in.Name (with in.Version and
	// in.Started) is alive now; in.LastSeen is ignored: the store's clock
	// sets it.
	Heartbeat(ctx context.Context, in Instance) error
	// Instances lists the instances whose last heartbeat is within window
	// of now, by name. Prune forgets those not seen for InstanceKeep.
	Instances(ctx context.Context, window time.Duration) ([]Instance, error)
	// RemoveInstance forgets the instance name (a clean stop).
	RemoveInstance(ctx context.Context, name string) error
}

// ConfigFingerprints keeps each instance's configuration fingerprint
// beside its heartbeat row: a hash per top-level key path ("policy.rules")
// of the key's redacted value, so that an instance starting on a shared
// store can name the keys another instance alive has set otherwise
// (app logs them). No value is stored, secrets least of all.
type ConfigFingerprints interface {
	// SetConfigFingerprint records fp (key path → hash) as the fingerprint
	// of the instance name, registered by a Heartbeat before; for an
	// instance not registered it returns an error matching
	// record.ErrNotFound.
	SetConfigFingerprint(ctx context.Context, name string, fp map[string]string) error
	// ConfigFingerprints returns the fingerprints of the instances seen
	// within window of now, by instance name; an instance that recorded
	// none (or one past MaxFingerprint bytes) is left out.
	ConfigFingerprints(ctx context.Context, window time.Duration) (map[string]map[string]string, error)
}

// MaxFingerprint bounds one instance's stored configuration fingerprint,
// in bytes of its JSON form.
const MaxFingerprint = 64 << 10

// InstanceKeep is how long an instance not seen is kept before Prune
// deletes it.
const InstanceKeep = 24 * time.Hour

// Instance is a registered instance.
type Instance struct {
	Name     string
	Version  string
	Started  time.Time // UTC
	LastSeen time.Time // UTC
}

// Pairings keeps the pairing codes handed to strangers and the identities
// paired with them (pairing's Store; store/storetest's
// PairingContract checks it). A code is pending until its Expires, by the
// store's clock; at most MaxPairingCodes are pending at once.
type Pairings interface {
	// OfferPairingCode returns the code pending for c.Identity when there
	// is one, else stores c and returns it: expired codes are forgotten,
	// and past MaxPairingCodes pending the oldest. Concurrent offers for
	// one identity return one code. It fails with record.ErrPaired when
	// c.Identity is paired, and with record.ErrDuplicate when c.Hash is
	// another identity's pending code (draw another code).
	OfferPairingCode(ctx context.Context, c record.PairingCode) (record.PairingCode, error)
	// PairingCodes lists the pending codes, oldest first.
	PairingCodes(ctx context.Context) ([]record.PairingCode, error)
	// Pair consumes id's pending code whose hash is hash and records id as
	// paired by by, in one step: of concurrent callers one gets the
	// pairing, the others record.ErrNotFound, as for a code that is not
	// (or no longer) pending.
	Pair(ctx context.Context, id core.Identity, hash string, by core.Identity) (record.Pairing, error)
	// PairedIdentities lists the paired identities, oldest first.
	PairedIdentities(ctx context.Context) ([]record.Pairing, error)
	// Unpair forgets id's pairing and returns it; record.ErrNotFound when
	// id is not paired.
	Unpair(ctx context.Context, id core.Identity) (record.Pairing, error)
}

// MaxPairingCodes bounds the pairing codes pending at once: a flood of
// strangers cannot fill the store.
const MaxPairingCodes = 100

// Store is everything a persistent implementation offers; app wires
// its parts into the core (History, UsageRecorder), hitl (Store, Audit,
// StandingStore) and the gateways (Cursors, Memory), and checks at compile time that
// Store satisfies those consumers' interfaces.
type Store interface {
	core.History
	UsageStore
	Approvals
	Audit
	Standing
	Cursors
	Memory
	Checkpoints
	ScheduleSlots
	Leases
	Instances
	Pairings
	// Prune deletes conversation history older than the retention period
	// and returns how many messages it removed; a zero retention keeps
	// history for ever. It also forgets the Memory keys past MemoryKeep or
	// MemoryMax, schedule slots older than SlotKeep and instances not seen
	// for InstanceKeep, whatever the retention (not counted). The audit log
	// is append-only and never pruned. Call it at start-up and then daily.
	Prune(ctx context.Context) (int64, error)
	// Close releases the store.
	Close() error
}
