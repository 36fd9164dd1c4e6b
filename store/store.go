// Package store is gatehouse's persistence: conversation history, token
// usage, approvals, the audit log, gateway cursors and memory, behind the small
// interfaces the core, hitl and the gateways already use. Implementations
// live in sub-packages (sqlite, the embedded default); store/storetest holds
// the contract suites every implementation must pass.
package store

import (
	"context"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

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
	MarkReminded(ctx context.Context, token string, now time.Time) error
	MarkEscalated(ctx context.Context, token string, step int, now time.Time) error
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

// Grants keeps grants ("/approve TOKEN for 30m"), numbered with the
// standing allows: the methods of hitl.GrantStore (storetest.GrantContract
// checks them, two stores on one database included).
type Grants interface {
	AddGrant(ctx context.Context, g record.Grant) (record.Grant, error)
	Grants(ctx context.Context, now time.Time) ([]record.Grant, error)
	GrantsFor(ctx context.Context, tool, args, conv string, now time.Time) ([]record.Grant, error)
	RemoveGrant(ctx context.Context, id int64) (record.Grant, error)
	ExpireGrants(ctx context.Context, now time.Time) ([]record.Grant, error)
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

// Parking keeps, by scope, platform updates a gateway had to confirm to
// its platform while their turn still ran, so that a restarted gateway
// hands them over again (gateways.Parking). Scopes are short ids (at most
// MaxMemoryKey bytes); a body is at most MaxParkedBody bytes.
type Parking interface {
	// Park stores each body under its id in scope, all in one transaction;
	// an id parked already keeps its first body.
	Park(ctx context.Context, scope string, updates map[int64][]byte) error
	// Unpark forgets id in scope; forgetting one not parked is no error.
	Unpark(ctx context.Context, scope string, id int64) error
	// Parked returns at most limit of scope's parked updates, the lowest ids.
	Parked(ctx context.Context, scope string, limit int) (map[int64][]byte, error)
}

// The bounds of Parking.
const (
	// MaxParkedBody is the most bytes of one parked body: Park refuses a
	// larger one (and writes nothing of that call).
	MaxParkedBody = 1 << 20
	// ParkedKeep is how long an update stays parked, counted from when it
	// was parked, before Prune forgets it: far longer than any restart
	// takes, short enough that an update never unparked (its gateway
	// removed from the configuration) does not stay for ever.
	ParkedKeep = 7 * 24 * time.Hour
)

// CheckPark is what Park refuses before it writes anything: an empty
// scope or one over MaxMemoryKey bytes, or a body over MaxParkedBody
// bytes (the error names the lowest such id). Both drivers call it.
func CheckPark(scope string, updates map[int64][]byte) error {
	if scope == "" || len(scope) > MaxMemoryKey {
		return fmt.Errorf("want a scope of 1 to %d bytes, got %d", MaxMemoryKey, len(scope))
	}
	bad, found := int64(0), false
	for id, body := range updates {
		if len(body) > MaxParkedBody && (!found || id < bad) {
			bad, found = id, true
		}
	}
	if found {
		return fmt.Errorf("update %d: body of %d bytes, over %d", bad, len(updates[bad]), MaxParkedBody)
	}
	return nil
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
	// ClaimInstance is the first heartbeat of a process: it records in as
	// Heartbeat does, but only when the name has no row, or its row is
	// in.Process's, or its row was last seen ttl or longer ago (by the
	// store's clock), and reports true; otherwise it changes nothing and
	// returns the row as it is (another process's, alive within ttl) and
	// false. Of concurrent claims of one name, one wins.
	ClaimInstance(ctx context.Context, in Instance, ttl time.Duration) (Instance, bool, error)
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
	Name    string
	Version string
	// Process is a random id the process draws at start: two processes
	// under one name have different ones ("" from a gatehouse before
	// schema 19).
	Process  string
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

// PairingWatcher is implemented by a store several instances share that
// tells them of each pairing and unpairing as it is committed (PostgreSQL:
// LISTEN/NOTIFY), so that an /unpair on one instance shuts the identity out
// of the others at once rather than at their next periodic read.
type PairingWatcher interface {
	// WatchPairings calls changed once it listens, and then after each
	// pairing or unpairing any instance commits, until ctx ends (nil) or
	// its connection fails (an error: call it again).
	WatchPairings(ctx context.Context, changed func()) error
}

// MaxPairingCodes bounds the pairing codes pending at once: a flood of
// strangers cannot fill the store.
const MaxPairingCodes = 100

// Webhooks records webhook deliveries and the threads of their
// incidents, shared by the instances on one store (webhooks.Store).
type Webhooks interface {
	// ClaimWebhookDelivery records that instance takes the delivery id of
	// the webhook hook: WebhookTaken for a new delivery, or one whose
	// taker claimed it at least stale ago and never finished it;
	// WebhookDuplicate for one finished; WebhookBusy while another
	// caller's claim is younger than stale. Of concurrent callers exactly
	// one takes it.
	ClaimWebhookDelivery(ctx context.Context, hook, id, instance string, stale time.Duration) (record.WebhookClaim, error)
	// FinishWebhookDelivery marks instance's claim done: later claims are
	// duplicates.
	FinishWebhookDelivery(ctx context.Context, hook, id, instance string) error
	// ReleaseWebhookDelivery forgets instance's unfinished claim, so that
	// the sender's retry is taken again.
	ReleaseWebhookDelivery(ctx context.Context, hook, id, instance string) error
	// WebhookThread returns the thread recorded for the incident of hook:
	// the zero value when none is, Conv "" and Opener set while an
	// instance's claim to open it is recorded.
	WebhookThread(ctx context.Context, hook, incident string) (record.WebhookThread, error)
	// ClaimWebhookThread records that instance opens the incident's
	// thread, when none is recorded or the claim of an instance that never
	// recorded its thread is at least stale old: then it returns true.
	// Otherwise it returns what is recorded (a thread, or another's
	// younger claim). Of concurrent callers exactly one claims it.
	ClaimWebhookThread(ctx context.Context, hook, incident, instance string, stale time.Duration) (record.WebhookThread, bool, error)
	// SetWebhookThread records t (Conv, ReplyTo) as the incident's thread
	// for instance's claim, and returns the one recorded: t, or the
	// thread of whoever took the claim over.
	SetWebhookThread(ctx context.Context, hook, incident, instance string, t record.WebhookThread) (record.WebhookThread, error)
	// ReleaseWebhookThread forgets instance's claim while it recorded no
	// thread (the thread could not be opened), so that the next delivery
	// claims it again.
	ReleaseWebhookThread(ctx context.Context, hook, incident, instance string) error
}

// WebhookKeep is how long webhook deliveries and incident threads are
// kept before Prune deletes them: longer than any sender retries or
// redelivers, and than an incident stays open.
const WebhookKeep = 30 * 24 * time.Hour

// Skills keeps what approvers decided of skills (skills.Store), shared
// by the instances on one store: the digest of each skill's enabled
// content, or its being disabled.
type Skills interface {
	// SetSkillState records st for st.Name, replacing what was.
	SetSkillState(ctx context.Context, st record.SkillState) error
	// SkillStates returns every skill's recorded state, by name.
	SkillStates(ctx context.Context) ([]record.SkillState, error)
}

// Store is everything a persistent implementation offers; app wires
// its parts into the core (History, UsageRecorder), hitl (Store, Audit,
// StandingStore) and the gateways (Cursors, Memory, Parking), and checks at compile time that
// Store satisfies those consumers' interfaces.
type Store interface {
	core.History
	UsageStore
	Approvals
	Audit
	AuditChain
	Standing
	Grants
	Cursors
	Memory
	Parking
	Checkpoints
	ScheduleSlots
	Leases
	Instances
	Pairings
	Webhooks
	WebSessions
	Conversations
	Skills
	// Prune deletes conversation history older than the retention period
	// and returns how many messages it removed; a zero retention keeps
	// history for ever. It also forgets the Memory keys past MemoryKeep or
	// MemoryMax, schedule slots older than SlotKeep, instances not seen
	// for InstanceKeep and updates parked longer than ParkedKeep ago,
	// whatever the retention (not counted). The audit log
	// is append-only and never pruned. Call it at start-up and then daily.
	Prune(ctx context.Context) (int64, error)
	// Close releases the store.
	Close() error
}
