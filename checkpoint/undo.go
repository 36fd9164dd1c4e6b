package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// maxListed is how many paths a reply lists before "and N more".
const maxListed = 20

// listed is how many checkpoints /checkpoints shows.
const listed = 10

var _ core.Undoer = (*Manager)(nil)

// Undo restores the workspace to the checkpoint before r.Conv's r.Steps
// last changing calls not undone yet that have one, and marks every
// checkpoint from there on (of any conversation) undone. Calls in between
// that ran without a checkpoint (markers) are taken back with them, and
// the reply names them. Only an approver may take back an approved call
// or another conversation's call, with a checkpoint or without. Every
// restore, refused or failed /undo is audited (one that finds nothing to
// undo, or another /undo or a changing call under way, changes nothing
// and is not).
func (m *Manager) Undo(ctx context.Context, r core.UndoRequest) (reply, note string) {
	if !m.runs.TryLock() {
		if m.undoing.Load() {
			return "Another /undo is restoring the workspace right now; this one did nothing. /checkpoints shows where things stand once it is done.", ""
		}
		return "A tool call that may change the workspace is running; /undo once it has ended (/cancel stops it).", ""
	}
	defer m.runs.Unlock()
	m.undoing.Store(true)
	defer m.undoing.Store(false)
	if m.cluster != nil {
		refusal, end := m.cluster.beginUndo(ctx)
		if refusal != "" {
			return refusal, ""
		}
		defer end()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.undoLocked(ctx, r)
}

// undoLocked is Undo once no changing call nor other /undo can run and
// m.mu is held: it finds the checkpoint to go back to and the calls it
// takes back, refuses what r's sender may not undo or what cannot be
// restored for missing blobs, and restores.
func (m *Manager) undoLocked(ctx context.Context, r core.UndoRequest) (reply, note string) {
	// /undo N counts the calls with a checkpoint: a marker is no state to
	// go back to.
	mine, err := m.o.Index.Checkpoints(ctx, record.CheckpointFilter{Conv: r.Conv.Key(), Live: true, Recorded: true, Limit: r.Steps})
	if err != nil {
		return m.failed(ctx, r, err)
	}
	switch {
	case len(mine) == 0:
		return m.nothingToUndo(ctx, r)
	case len(mine) < r.Steps:
		return fmt.Sprintf("Only %d changing tool call(s) of this conversation have a checkpoint to go back to; /undo %d takes them all back.", len(mine), len(mine)), ""
	}
	target := mine[len(mine)-1]
	undone, err := m.o.Index.Checkpoints(ctx, record.CheckpointFilter{Live: true, After: target.ID - 1})
	if err != nil {
		return m.failed(ctx, r, err)
	}
	if why := refusal(r, undone); why != "" {
		m.audit(ctx, r, target, "refused", why)
		m.log.Warn().Str("conv", r.Conv.Key()).Str("by", string(r.By)).Str("why", why).Msg("checkpoint: /undo refused")
		return fmt.Sprintf("Not authorised (your identity is %s): %s. Only the configured approvers can undo that.",
			textutil.GraphicLine(string(r.By)), textutil.GraphicLine(why)), ""
	}
	full, err := m.o.Index.Checkpoint(ctx, target.ID)
	if err != nil {
		return m.failed(ctx, r, err)
	}
	missing, err := m.missingBlobs(ctx, full.Files)
	if err != nil {
		return m.failed(ctx, r, err)
	}
	if len(missing) > 0 {
		m.log.Error().Int64("checkpoint", target.ID).Int("missing", len(missing)).Stringer("blobs", m.blobs).
			Msg("checkpoint: blobs of a checkpoint are missing; /undo refused")
		m.audit(ctx, r, target, "failed", fmt.Sprintf("%d blob(s) missing from the blob store", len(missing)))
		return fmt.Sprintf("Cannot restore to before %s: the saved content of %s is missing from the blob store (the bot's log has the details). Nothing was changed.",
			m.describe(target), textutil.GraphicLine(missing[0])), ""
	}
	return m.restoreTo(ctx, r, target, full, undone)
}

// restoreTo restores the workspace to full, the checkpoint target with
// its files, taking back the calls undone, and answers r: a damaged
// blob refuses the undo before anything is changed, another failure
// says how many paths were changed; a restore is recorded (recordUndo).
func (m *Manager) restoreTo(ctx context.Context, r core.UndoRequest, target, full record.Checkpoint, undone []record.Checkpoint) (reply, note string) {
	changes, err := m.restore(ctx, full.Files, full.Created)
	var damaged *damagedError
	if errors.As(err, &damaged) {
		m.log.Error().Err(err).Int64("checkpoint", target.ID).Stringer("blobs", m.blobs).
			Msg("checkpoint: a blob of a checkpoint is damaged; /undo refused")
		m.audit(ctx, r, target, "failed", clip(err.Error(), 500))
		return fmt.Sprintf("Cannot restore to before %s: the saved content of %s is damaged in the blob store (the bot's log has the details). Nothing was changed.",
			m.describe(target), textutil.GraphicLine(damaged.path)), ""
	}
	if err != nil {
		m.log.Error().Err(err).Int64("checkpoint", target.ID).Msg("checkpoint: restore failed")
		m.audit(ctx, r, target, "failed", err.Error())
		return fmt.Sprintf("The workspace could not be fully restored to before %s (the bot's log has the details); %d path(s) were changed. /undo again to retry.",
			target.Tool, len(changes)), ""
	}
	return m.recordUndo(ctx, r, target, undone, changes)
}

// recordUndo marks the checkpoints from target on undone, once the
// workspace has been restored to before it (changes), audits and logs
// the undo, and answers r; a mark that fails is said in the reply and
// audited as failed.
func (m *Manager) recordUndo(ctx context.Context, r core.UndoRequest, target record.Checkpoint, undone []record.Checkpoint, changes []change) (reply, note string) {
	// The files are restored: the mark must not be lost to a request
	// cancelled meanwhile.
	_, markErr := m.o.Index.MarkUndone(context.WithoutCancel(ctx), target.ID, r.By, m.o.Now())
	paths := pathList(changes)
	what := m.describe(target)
	detail := fmt.Sprintf("restored to before %s; %d call(s) taken back%s; %d path(s) changed: %s",
		what, len(undone), unrecordedDetail(undone), len(changes), clip(strings.Join(paths, ", "), 500))
	reply = m.undoReply(r, target, undone, paths)
	if markErr != nil {
		// The workspace is restored but its checkpoints stay live: the
		// next /undo would restore to the same one again. Say so, and
		// audit the attempt as failed.
		m.log.Error().Err(markErr).Int64("checkpoint", target.ID).Msg("checkpoint: restored, but could not mark checkpoints undone")
		m.audit(ctx, r, target, "failed", detail+"; the undo could not be recorded: "+clip(markErr.Error(), 200))
		reply += fmt.Sprintf("\n⚠ The files were restored, but the undo could not be recorded (storage error; the bot's log has the details): another /undo would restore to before %s again rather than go further back.", what)
		return reply, m.undoNote(r, what, paths, undone)
	}
	m.audit(ctx, r, target, "undone", detail)
	m.log.Info().Str("conv", r.Conv.Key()).Str("by", string(r.By)).Int64("checkpoint", target.ID).
		Int("calls", len(undone)).Int("paths", len(changes)).Msg("checkpoint: workspace restored")
	return reply, m.undoNote(r, what, paths, undone)
}

// nothingToUndo answers an /undo of a conversation with no live
// checkpoint, naming its last call when that one ran without any.
func (m *Manager) nothingToUndo(ctx context.Context, r core.UndoRequest) (string, string) {
	last, err := m.o.Index.Checkpoints(ctx, record.CheckpointFilter{Conv: r.Conv.Key(), Live: true, Limit: 1})
	if err != nil {
		return m.failed(ctx, r, err)
	}
	if len(last) == 1 && last[0].NoCheckpoint != "" {
		return fmt.Sprintf("Cannot undo: %s ran without a checkpoint (%s), and no earlier checkpoint of this conversation is left to restore to. Nothing was changed.",
			m.describe(last[0]), textutil.GraphicLine(clip(last[0].NoCheckpoint, 200))), ""
	}
	return "Nothing to undo: no tool call changed the workspace from this conversation since its last /undo (or its checkpoints were pruned).", ""
}

// unrecordedDetail names, for the audit log, the calls taken back that
// had no checkpoint.
func unrecordedDetail(undone []record.Checkpoint) string {
	var names []string
	for _, c := range undone {
		if c.NoCheckpoint != "" {
			names = append(names, fmt.Sprintf("%s at %s (%s)", c.Tool, c.Created.UTC().Format("15:04 UTC"), c.Conv.Key()))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " (without a checkpoint: " + strings.Join(names, ", ") + ")"
}

// missingBlobs lists the files whose blob is not stored.
func (m *Manager) missingBlobs(ctx context.Context, files []record.CheckpointFile) ([]string, error) {
	var sums []string
	for _, f := range files {
		if f.Kind == record.KindFile {
			sums = append(sums, f.Blob)
		}
	}
	present, err := m.blobs.Present(ctx, sums)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		if f.Kind == record.KindFile && !present[f.Blob] {
			out = append(out, f.Path)
		}
	}
	return out, nil
}

// refusal says why r may not take back the calls of undone, or "".
// Calls that ran without a checkpoint count like the others: the restore
// takes them back all the same.
func refusal(r core.UndoRequest, undone []record.Checkpoint) string {
	if r.Approver {
		return ""
	}
	for _, c := range undone {
		when := c.Created.UTC().Format("15:04 UTC")
		switch {
		case c.Approval != "" && c.NoCheckpoint != "":
			return fmt.Sprintf("it would also take back %s at %s, an approved call that ran without a checkpoint", c.Tool, when)
		case c.Approval != "":
			return fmt.Sprintf("%s at %s was an approved call", c.Tool, when)
		case c.Conv.Key() != r.Conv.Key() && c.NoCheckpoint != "":
			return fmt.Sprintf("it would also take back %s at %s of another conversation (%s), which ran without a checkpoint", c.Tool, when, c.Conv.Key())
		case c.Conv.Key() != r.Conv.Key():
			return fmt.Sprintf("it would also take back %s of another conversation (%s)", c.Tool, c.Conv.Key())
		}
	}
	return ""
}

// describe names a checkpoint's call for people: "write_file at 14:02".
func (m *Manager) describe(c record.Checkpoint) string {
	return fmt.Sprintf("%s at %s", c.Tool, c.Created.In(m.o.Location).Format("15:04"))
}

// undoReply is the answer to a successful /undo.
func (m *Manager) undoReply(r core.UndoRequest, target record.Checkpoint, undone []record.Checkpoint, paths []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Restored the workspace to before %s (%s).", m.describe(target), textutil.GraphicLine(preview(target.Args)))
	if len(paths) == 0 {
		b.WriteString("\nNothing had changed since.")
	} else {
		fmt.Fprintf(&b, "\n%d path(s) changed:", len(paths))
		for i, p := range paths {
			if i == maxListed {
				fmt.Fprintf(&b, "\nand %d more", len(paths)-maxListed)
				break
			}
			// One path a line: a newline in a name must not start a line
			// that reads as another path or as the bot's own words.
			b.WriteString("\n• " + textutil.GraphicLine(p))
		}
	}
	var others, bare []string
	for _, c := range undone {
		switch {
		case c.Conv.Key() != r.Conv.Key() && c.NoCheckpoint != "":
			others = append(others, fmt.Sprintf("%s (%s, no checkpoint)", m.describe(c), c.Conv.Key()))
		case c.Conv.Key() != r.Conv.Key():
			others = append(others, fmt.Sprintf("%s (%s)", m.describe(c), c.Conv.Key()))
		case c.NoCheckpoint != "":
			bare = append(bare, m.describe(c))
		}
	}
	if len(bare) > 0 {
		// Newest first in undone: name them in the order they ran.
		slices.Reverse(bare)
		fmt.Fprintf(&b, "\nThis also took back %s, which had no checkpoint: the restore goes back past it.", textutil.GraphicLine(strings.Join(bare, " and ")))
	}
	if len(others) > 0 {
		fmt.Fprintf(&b, "\nThis also took back later call(s) of other conversations: %s.", textutil.GraphicLine(strings.Join(others, ", ")))
	}
	return b.String()
}

// undoNote is the model's history note.
func (m *Manager) undoNote(r core.UndoRequest, what string, paths []string, undone []record.Checkpoint) string {
	list := "nothing had changed"
	if len(paths) > 0 {
		shown := paths
		if len(shown) > maxListed {
			shown = shown[:maxListed]
		}
		list = strings.Join(shown, ", ")
		if len(paths) > maxListed {
			list += fmt.Sprintf(" and %d more", len(paths)-maxListed)
		}
	}
	also := ""
	var bare []string
	for _, c := range undone {
		if c.NoCheckpoint != "" && c.Conv.Key() == r.Conv.Key() {
			bare = append(bare, m.describe(c))
		}
	}
	if len(bare) > 0 {
		slices.Reverse(bare)
		also = fmt.Sprintf(" (this also took back %s, which had no checkpoint)", strings.Join(bare, " and "))
	}
	return fmt.Sprintf("workspace restored to before %s by %s (/undo)%s: %s. Those changes are gone; do not assume they exist.", what, r.By, also, list)
}

// pathList renders changes, a removed tree once by its top.
func pathList(changes []change) []string {
	var out []string
	removedTop := ""
	for _, c := range changes {
		if removedTop != "" && isUnder(c.path, removedTop) {
			continue
		}
		removedTop = ""
		if c.removed {
			removedTop = c.path
			out = append(out, c.path+" (removed)")
			continue
		}
		out = append(out, c.path)
	}
	return out
}

// failed reports a storage failure of /undo.
func (m *Manager) failed(ctx context.Context, r core.UndoRequest, err error) (string, string) {
	m.log.Error().Err(err).Str("conv", r.Conv.Key()).Msg("checkpoint: /undo failed")
	return "Could not read the checkpoints (storage error; the bot's log has the details).", ""
}

// audit appends an audit row about an /undo.
func (m *Manager) audit(ctx context.Context, r core.UndoRequest, target record.Checkpoint, outcome, detail string) {
	if m.o.Audit == nil {
		return
	}
	e := record.AuditEntry{At: m.o.Now(), Conv: r.Conv.Key(), Tool: "/undo", Args: fmt.Sprintf(`{"steps":%d}`, r.Steps),
		RequestedBy: r.By, Outcome: outcome, Detail: detail}
	if r.Approver {
		e.ApprovedBy = r.By
	}
	if err := m.o.Audit.AppendAudit(context.WithoutCancel(ctx), e); err != nil {
		m.log.Error().Err(err).Msg("checkpoint: audit append failed")
	}
}

// CheckpointsText lists conv's last checkpoints, newest first: time, tool,
// a preview of the arguments and the paths the call touched.
func (m *Manager) CheckpointsText(ctx context.Context, conv core.Conversation) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	list, err := m.o.Index.Checkpoints(ctx, record.CheckpointFilter{Conv: conv.Key(), Limit: listed})
	if err != nil {
		m.log.Error().Err(err).Msg("checkpoint: list")
		return "Could not read the checkpoints (storage error; the bot's log has the details)."
	}
	if len(list) == 0 {
		return "No checkpoints in this conversation: none of its tool calls changed the workspace yet (or they were pruned)."
	}
	lines := []string{"Checkpoints of this conversation, newest first (/undo goes back to before the newest not undone):"}
	for _, c := range list {
		line := fmt.Sprintf("#%d %s %s %s", c.ID, c.Created.In(m.o.Location).Format("01-02 15:04"), c.Tool,
			textutil.GraphicLine(preview(c.Args)))
		if c.NoCheckpoint != "" {
			line += " (no checkpoint: " + textutil.GraphicLine(clip(c.NoCheckpoint, 60)) + ")"
		} else if touched, err := m.touched(ctx, c); err == nil {
			line += " — " + touchedText(touched)
		}
		if c.Approval != "" {
			line += " [approved]"
		}
		if !c.Undone.IsZero() {
			line += " [undone]"
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// touched lists what c's call changed: the difference between c and the
// next real checkpoint, or the workspace now (its stat cache) for the
// newest; calls without a checkpoint in between count with c's.
func (m *Manager) touched(ctx context.Context, c record.Checkpoint) ([]string, error) {
	full, err := m.o.Index.Checkpoint(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	next, err := m.o.Index.Checkpoints(ctx, record.CheckpointFilter{After: c.ID, Recorded: true})
	if err != nil {
		return nil, err
	}
	if len(next) > 0 {
		after, err := m.o.Index.Checkpoint(ctx, next[len(next)-1].ID)
		if err != nil {
			return nil, err
		}
		return diff(full.Files, after.Files), nil
	}
	now, err := m.walk(ctx, false)
	if err != nil {
		return nil, err
	}
	old := make(map[string]record.CheckpointFile, len(full.Files))
	for _, f := range full.Files {
		old[f.Path] = f
	}
	for i, f := range now {
		if o, ok := old[f.Path]; ok && f.Kind == record.KindFile && unchanged(o, f, time.Now().Add(time.Hour)) {
			now[i].Blob = o.Blob
		} else if f.Kind == record.KindFile {
			now[i].Blob = "changed"
		}
	}
	return diff(full.Files, now), nil
}

// touchedText renders touched paths briefly.
func touchedText(paths []string) string {
	switch len(paths) {
	case 0:
		return "no files changed"
	case 1:
		return "1 path: " + textutil.GraphicLine(paths[0])
	}
	var shown []string
	for _, p := range paths[:min(len(paths), 3)] {
		shown = append(shown, textutil.GraphicLine(p))
	}
	s := fmt.Sprintf("%d paths: %s", len(paths), strings.Join(shown, ", "))
	if len(paths) > 3 {
		s += ", …"
	}
	return s
}

// preview is a call's arguments, shortened.
func preview(args string) string { return clip(args, 60) }

// clip shortens s to max runes with an ellipsis.
func clip(s string, max int) string { return textutil.Shorten(s, max) }
