// Package checkpoint records the workspace before every tool call that may
// change it and restores it on /undo. File contents are kept as
// content-addressed blobs (named by SHA-256, so each content is stored
// once) in a BlobStore: a directory beside the database, or a table of a
// database several instances share; the index of checkpoints (the
// call, its conversation and approval, and the manifest of every entry) is
// in the store. A checkpoint hashes and copies only the files whose size,
// modification time, change time or inode differ from the last checkpoint:
// an unchanged workspace costs a stat walk.
//
// Blobs are written and synced before the index row that names them is
// committed, and checkpoints are removed from the index before their blobs
// are deleted, so a crash at any point leaves an index whose every blob is
// stored; blobs nothing names are collected at start and when pruning.
package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// Defaults of Options' zero limits.
const (
	DefaultMaxFile  = 16 << 20
	DefaultMaxTotal = 512 << 20
	DefaultKeep     = 50
)

// Index keeps the checkpoints (the store implements it; store.Checkpoints
// lists the same methods).
type Index interface {
	// AddCheckpoint stores c with its files in one transaction; a marker
	// (c.NoCheckpoint set) is stored without files.
	AddCheckpoint(ctx context.Context, c record.Checkpoint) (int64, error)
	// Checkpoints lists the checkpoints f selects, newest first, without files.
	Checkpoints(ctx context.Context, f record.CheckpointFilter) ([]record.Checkpoint, error)
	// Checkpoint returns one checkpoint with its files, or record.ErrNotFound.
	Checkpoint(ctx context.Context, id int64) (record.Checkpoint, error)
	// LatestCheckpoint returns the newest real checkpoint (markers
	// skipped) with its files, or record.ErrNotFound.
	LatestCheckpoint(ctx context.Context) (record.Checkpoint, error)
	// MarkUndone marks the checkpoints from ID from on not yet undone.
	MarkUndone(ctx context.Context, from int64, by core.Identity, at time.Time) (int64, error)
	// DeleteCheckpoints removes checkpoints from the index.
	DeleteCheckpoints(ctx context.Context, ids ...int64) error
	// CheckpointBlobs returns every blob a checkpoint names, with its size.
	CheckpointBlobs(ctx context.Context) (map[string]int64, error)
}

// Audit appends to the audit log (hitl.Audit's method).
type Audit interface {
	AppendAudit(ctx context.Context, e record.AuditEntry) error
}

// Options configure a Manager.
type Options struct {
	// Workspace is the directory recorded and restored (tools.workspace).
	Workspace string
	// Blobs is the blob directory (created 0700 if missing), used when
	// BlobStore is nil.
	Blobs string
	// BlobStore keeps the blobs; a directory at Blobs when nil.
	BlobStore BlobStore
	// Shared says that other instances share the index and the blob
	// store: each checkpoint then starts from the index's newest
	// checkpoint and the store's total, not from this Manager's own.
	Shared bool
	// MaxFile is the largest file a checkpoint copies; a workspace holding
	// a larger one gets no checkpoint. DefaultMaxFile when zero.
	MaxFile int64
	// MaxTotal bounds the blob directory; the oldest checkpoints are
	// pruned to stay under it. DefaultMaxTotal when zero.
	MaxTotal int64
	// Leases, on a store several instances share (with Shared), extend
	// the hold of a changing call on the workspace to the others: while
	// one runs on this instance, it holds a lease named after Instance,
	// and a restore holds another, so that an /undo on another instance
	// is refused while a changing call runs here, and a changing call
	// waits while another instance restores. Renewed every LeaseTTL/3.
	// Nil: this process alone uses the workspace.
	Leases   Leases
	Instance string
	LeaseTTL time.Duration
	// Fence, with Leases, is told when each take or renewal of this
	// instance's run lease that succeeded began, and when the lease is let
	// go, so that it stops the changing calls before the lease can expire
	// (cluster.Fence). Nil: none.
	Fence Fence
	// Keep is how many checkpoints a conversation keeps. DefaultKeep when zero.
	Keep  int
	Index Index
	Audit Audit
	Log   zerolog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Location renders times in replies; UTC when nil.
	Location *time.Location
	// CollectLater leaves New's collection out: the caller runs Collect
	// once its start-up is done (the bot does, after its first receive,
	// so that the walk of the blob store does not delay it). A checkpoint
	// taken before that collects first.
	CollectLater bool

	// beforeCommit, when set (tests), runs after a checkpoint's blobs are
	// written and before its index row is committed; an error stands for
	// a crash there.
	beforeCommit func() error
	// afterScan, when set (tests), runs after a checkpoint's plan is made
	// and before its files are copied, with the number of files the plan
	// hashes and copies: tests change the workspace there.
	afterScan func(pending int)
	// syncDir makes a directory's entries durable; the package's syncDir
	// when nil (tests record the calls).
	syncDir func(dir string) error
}

// Manager takes checkpoints and restores them. It is safe for concurrent
// use: checkpoints, restores and pruning are serialised, and a restore is
// refused while a changing tool call runs.
type Manager struct {
	o     Options
	log   zerolog.Logger
	blobs BlobStore

	// runs is held for reading by every changing tool call from its
	// checkpoint to its end, and for writing by a restore, which never
	// waits for it (TryLock).
	runs sync.RWMutex
	// undoing is true while an /undo holds runs: another /undo then says
	// so, rather than that a tool call is running.
	undoing atomic.Bool

	// cluster extends runs to the other instances (Options.Leases); nil
	// without them.
	cluster *clusterHold

	mu    sync.Mutex // serialises checkpoints, restores and pruning
	total int64      // bytes in the blob store; under mu
	stale bool       // checkpoints were deleted since the last collection; under mu
	// counted is true once a collection has counted the blob store
	// (total); under mu.
	counted bool
	// pruned are the checkpoints the current take pruned for room; under mu.
	pruned []record.Checkpoint
	// last is the newest checkpoint this Manager took, with its files: the
	// stat cache of the next one, without reading it back from the index
	// (one bot per database). Nil until the first take, which reads the
	// index. Its blobs may have been pruned since: every collection spares
	// the blobs the checkpoint being taken reuses. Under mu. Always nil
	// when Options.Shared: another instance may have taken a later one.
	last *record.Checkpoint
}

// New returns a Manager over o, creating the blob directory and collecting
// blobs no checkpoint names (left by a crash), unless o.CollectLater.
func New(ctx context.Context, o Options) (*Manager, error) {
	if o.Workspace == "" || (o.Blobs == "" && o.BlobStore == nil) || o.Index == nil {
		return nil, errors.New("checkpoint: need a workspace, a blob store and an index")
	}
	if o.MaxFile <= 0 {
		o.MaxFile = DefaultMaxFile
	}
	if o.MaxTotal <= 0 {
		o.MaxTotal = DefaultMaxTotal
	}
	if o.Keep <= 0 {
		o.Keep = DefaultKeep
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.syncDir == nil {
		o.syncDir = syncDir
	}
	// The walk never follows a symbolic link, the workspace's own path
	// included: a workspace reached through one (tools.workspace a link,
	// as the tools allow) would be recorded as empty. Resolve it, as
	// tools.NewWorkspace does, and the blob directory too so that the walk
	// recognises it inside the workspace.
	ws, err := realPath(o.Workspace)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: workspace: %w", err)
	}
	o.Workspace = ws
	blobs := o.BlobStore
	if blobs == nil {
		fb, err := newFileBlobs(o.Blobs, o.syncDir)
		if err != nil {
			return nil, err
		}
		o.Blobs, blobs = fb.dir, fb
	}
	m := &Manager{o: o, blobs: blobs, log: o.Log.With().Str("component", "checkpoint").Logger()}
	if o.Leases != nil {
		if o.Instance == "" || o.LeaseTTL <= 0 {
			return nil, errors.New("checkpoint: leases need the instance's name and a lease ttl")
		}
		m.cluster = &clusterHold{leases: o.Leases, instance: o.Instance, ttl: o.LeaseTTL, fence: o.Fence, log: m.log}
	}
	if o.CollectLater {
		return m, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.collect(ctx, nil); err != nil {
		return nil, err
	}
	return m, nil
}

// Collect deletes the blobs no checkpoint names (left by a crash) and
// leftover temporary files, and counts the blob store: New's collection,
// for a Manager made with Options.CollectLater. It does nothing once a
// collection has run (a checkpoint taken before it runs one).
func (m *Manager) Collect(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counted {
		return nil
	}
	return m.collect(ctx, nil)
}

// realPath is dir absolute, with its symbolic links resolved.
func realPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// Checkpoint records the workspace before a runs (tools.Checkpointer;
// app checks the fit). note is "no checkpoint: …" and why when it
// could not, and says so when old checkpoints were pruned to make room;
// "" otherwise. release ends the run's hold on the workspace.
//
// A call that gets no checkpoint still leaves a marker in the index (see
// record.Checkpoint.NoCheckpoint): a later /undo to an earlier checkpoint
// takes that call back too, and must know it to refuse or name it.
func (m *Manager) Checkpoint(ctx context.Context, a core.Action) (note string, release func()) {
	m.runs.RLock()
	release = sync.OnceFunc(m.runs.RUnlock)
	if m.cluster != nil {
		m.cluster.enter(ctx)
		release = sync.OnceFunc(func() {
			m.cluster.leave()
			m.runs.RUnlock()
		})
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pruned = nil
	id, err := m.take(ctx, a)
	pruned := prunedNote(m.pruned, m.o.MaxTotal)
	if err != nil {
		var lim *limitError
		if errors.As(err, &lim) {
			m.log.Warn().Str("conv", a.Conv.Key()).Str("tool", a.Call.Name).Str("why", lim.Error()).Msg("no checkpoint: over a limit")
		} else {
			m.log.Error().Err(err).Str("conv", a.Conv.Key()).Str("tool", a.Call.Name).Msg("no checkpoint")
		}
		return joinLines("no checkpoint: "+noteReason(err), m.mark(ctx, a, err), pruned), release
	}
	m.log.Debug().Int64("checkpoint", id).Str("conv", a.Conv.Key()).Str("tool", a.Call.Name).Msg("checkpoint")
	return pruned, release
}

// prunedNote says which checkpoints were pruned to stay under max_total.
func prunedNote(pruned []record.Checkpoint, max int64) string {
	if len(pruned) == 0 {
		return ""
	}
	return fmt.Sprintf("checkpoint: the %d oldest checkpoint(s) (the oldest from %s) were pruned to stay under tools.checkpoints.max_total (%s)",
		len(pruned), pruned[0].Created.UTC().Format("2006-01-02 15:04 UTC"), Size(max))
}

// joinLines joins the non-empty lines.
func joinLines(lines ...string) string {
	var out []string
	for _, l := range lines {
		if l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Preflight returns "no checkpoint: …" when a checkpoint of the workspace
// could not be made now (a file over max_file, more than max_total), for
// the approval request of a changing call; "" when it could.
func (m *Manager) Preflight(ctx context.Context, a core.Action) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, err := m.scan(ctx, nil)
	var lim *limitError
	if errors.As(err, &lim) {
		// People read it in the approval request: a file name is untrusted.
		return "no checkpoint: " + textutil.GraphicLine(lim.Error()) + "; /undo cannot take this call back"
	}
	return ""
}

// mark records that a ran without a checkpoint, because of err, as a
// marker row; m.mu is held. It returns a line for the call's result when
// the marker could not be recorded either, "" otherwise. The call may run
// even if ctx ends now: the marker is written regardless.
func (m *Manager) mark(ctx context.Context, a core.Action, err error) string {
	why := "the workspace could not be recorded"
	var lim *limitError
	if errors.As(err, &lim) {
		why = lim.Error()
	}
	ctx = context.WithoutCancel(ctx)
	c := record.Checkpoint{Conv: a.Conv, Tool: a.Call.Name, Args: a.Call.Args, CallID: a.Call.ID,
		RequestedBy: a.From, Approval: a.Approval, Created: m.o.Now(), NoCheckpoint: why}
	id, err := m.o.Index.AddCheckpoint(ctx, c)
	if err != nil {
		m.log.Error().Err(err).Str("conv", a.Conv.Key()).Str("tool", a.Call.Name).
			Msg("checkpoint: could not record that a call runs without a checkpoint")
		return "checkpoint: the bot could not record that this call ran without a checkpoint; an /undo to an earlier checkpoint may take it back without naming it"
	}
	m.log.Debug().Int64("marker", id).Str("conv", a.Conv.Key()).Str("tool", a.Call.Name).Msg("checkpoint: marker of a call without checkpoint")
	if err := m.keep(ctx, a.Conv); err != nil {
		m.log.Error().Err(err).Msg("checkpoint: pruning past keep failed")
	}
	return ""
}

// limitError says a checkpoint would be over a limit.
type limitError struct{ why string }

func (e *limitError) Error() string { return e.why }

// noteReason is the reason a result gives for a missing checkpoint: a
// limit in full, any other failure in general terms (the log has it).
func noteReason(err error) string {
	var lim *limitError
	if errors.As(err, &lim) {
		return lim.Error() + "; /undo cannot take this call back"
	}
	return "the workspace could not be recorded (the bot's log has the details); /undo cannot take this call back"
}

// count brings m.total up to date before a take; m.mu is held.
func (m *Manager) count(ctx context.Context) error {
	if !m.counted {
		// Options.CollectLater, and Collect has not run yet: the plan
		// needs the blob store's size, and must not reuse a blob the
		// collection would then delete.
		if err := m.collect(ctx, nil); err != nil {
			return err
		}
	}
	if m.o.Shared {
		// Another instance may have taken checkpoints, pruned them and
		// stored blobs since this one's last: the blobs it left to
		// collect are collected before any checkpoint is pruned for room.
		m.last, m.stale = nil, true
		total, err := m.blobs.Total(ctx)
		if err != nil {
			return err
		}
		m.total = total
	}
	return nil
}

// take records one checkpoint; m.mu is held.
func (m *Manager) take(ctx context.Context, a core.Action) (int64, error) {
	if err := m.count(ctx); err != nil {
		return 0, err
	}
	if m.last == nil {
		prev, err := m.o.Index.LatestCheckpoint(ctx)
		switch {
		case errors.Is(err, record.ErrNotFound):
		case err != nil:
			return 0, fmt.Errorf("checkpoint: last checkpoint: %w", err)
		default:
			// Once a start (each take when shared): a blob lost since (the
			// directory deleted, collected by another instance) must be
			// copied again, not named. A shared store marks the others in
			// use, so that no other instance collects them meanwhile.
			var sums []string
			for _, f := range prev.Files {
				if f.Blob != "" {
					sums = append(sums, f.Blob)
				}
			}
			present, err := m.blobs.Present(ctx, sums)
			if err != nil {
				return 0, err
			}
			for i, f := range prev.Files {
				if f.Blob != "" && !present[f.Blob] {
					prev.Files[i].Blob = ""
				}
			}
			m.last = &prev
		}
	}
	plan, err := m.scan(ctx, m.last)
	if err != nil {
		return 0, err
	}
	if err := m.makeRoom(ctx, plan); err != nil {
		return 0, err
	}
	if m.o.afterScan != nil {
		m.o.afterScan(len(plan.pending))
	}
	added, err := m.store(ctx, plan)
	if err == nil && m.o.beforeCommit != nil {
		if err = m.o.beforeCommit(); err != nil {
			err = fmt.Errorf("checkpoint: %w", err)
		}
	}
	if err != nil {
		// Blobs copied before the failure are named by no checkpoint:
		// collect them before pruning any checkpoint for room.
		m.stale = true
		return 0, err
	}
	c := record.Checkpoint{
		Conv: a.Conv, Tool: a.Call.Name, Args: a.Call.Args, CallID: a.Call.ID,
		RequestedBy: a.From, Approval: a.Approval, Created: plan.started, Added: added, Files: plan.files,
	}
	id, err := m.o.Index.AddCheckpoint(ctx, c)
	if err != nil {
		m.stale = true // its blobs, if the row was not committed
		return 0, fmt.Errorf("checkpoint: index: %w", err)
	}
	c.ID = id
	m.last = &c
	if err := m.keep(ctx, a.Conv); err != nil {
		m.log.Error().Err(err).Msg("checkpoint: pruning past keep failed")
	}
	return id, nil
}
