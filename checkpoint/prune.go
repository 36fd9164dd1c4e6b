package checkpoint

import (
	"context"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// makeRoom prunes the oldest checkpoints (of any conversation) until the
// plan's new blobs fit under MaxTotal; m.mu is held. The blobs the plan
// reuses stay whatever is pruned. A marker that is the oldest row goes
// too: it holds no blobs, and no checkpoint older than it is left for a
// restore to take its call back across.
func (m *Manager) makeRoom(ctx context.Context, p *plan) error {
	if m.total+p.need <= m.o.MaxTotal {
		return nil
	}
	if m.stale {
		if err := m.collect(ctx, p.reused); err != nil {
			return err
		}
	}
	for m.total+p.need > m.o.MaxTotal {
		all, err := m.o.Index.Checkpoints(ctx, record.CheckpointFilter{})
		if err != nil {
			return fmt.Errorf("checkpoint: prune: %w", err)
		}
		if len(all) == 0 {
			// Only blobs the plan reuses are left, and scan checked that
			// the plan fits: the directory holds something else.
			return &limitError{fmt.Sprintf("the blob store holds %s, over tools.checkpoints.max_total (%s)",
				Size(m.total), Size(m.o.MaxTotal))}
		}
		old := all[len(all)-1]
		if err := m.o.Index.DeleteCheckpoints(ctx, old.ID); err != nil {
			return fmt.Errorf("checkpoint: prune: %w", err)
		}
		if old.NoCheckpoint != "" {
			continue
		}
		m.log.Warn().Int64("checkpoint", old.ID).Str("conv", old.Conv.Key()).Str("tool", old.Tool).
			Time("at", old.Created).Int64("max_total", m.o.MaxTotal).
			Msg("checkpoint: oldest checkpoint pruned to stay under tools.checkpoints.max_total")
		m.pruned = append(m.pruned, old)
		if err := m.collect(ctx, p.reused); err != nil {
			return err
		}
	}
	return nil
}

// keep prunes conv's checkpoints past Keep; their blobs are collected when
// room is needed or at the next start. Markers of calls without a
// checkpoint do not count against Keep (a run of them must not push the
// conversation's real checkpoints out): conv keeps its Keep newest
// markers too, and an older one as long as a live checkpoint older than
// it remains, of any conversation, since a restore to that checkpoint
// would take the marker's call back and /undo must know of it.
func (m *Manager) keep(ctx context.Context, conv core.Conversation) error {
	list, err := m.o.Index.Checkpoints(ctx, record.CheckpointFilter{Conv: conv.Key()})
	if err != nil {
		return fmt.Errorf("checkpoint: keep: %w", err)
	}
	var real, markers []record.Checkpoint
	for _, c := range list {
		if c.NoCheckpoint != "" {
			markers = append(markers, c)
		} else {
			real = append(real, c)
		}
	}
	if len(real) > m.o.Keep {
		var ids []int64
		for _, c := range real[m.o.Keep:] {
			ids = append(ids, c.ID)
		}
		if err := m.o.Index.DeleteCheckpoints(ctx, ids...); err != nil {
			return fmt.Errorf("checkpoint: keep: %w", err)
		}
		m.stale = true
		m.log.Debug().Str("conv", conv.Key()).Int("pruned", len(ids)).Int("keep", m.o.Keep).Msg("checkpoint: pruned past keep")
	}
	if len(markers) <= m.o.Keep {
		return nil
	}
	live, err := m.o.Index.Checkpoints(ctx, record.CheckpointFilter{Live: true, Recorded: true})
	if err != nil {
		return fmt.Errorf("checkpoint: keep: %w", err)
	}
	var ids []int64
	for _, c := range markers[m.o.Keep:] {
		if len(live) == 0 || c.ID < live[len(live)-1].ID {
			ids = append(ids, c.ID)
		}
	}
	if err := m.o.Index.DeleteCheckpoints(ctx, ids...); err != nil {
		return fmt.Errorf("checkpoint: keep: %w", err)
	}
	return nil
}

// collect deletes the blobs no checkpoint names (nor also), and leftover
// temporary files, and recounts m.total; m.mu is held.
func (m *Manager) collect(ctx context.Context, also map[string]int64) error {
	refs, err := m.o.Index.CheckpointBlobs(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint: collect: %w", err)
	}
	keep := make(map[string]bool, len(refs)+len(also))
	for s := range refs {
		keep[s] = true
	}
	for s := range also {
		keep[s] = true
	}
	total, removed, err := m.blobs.Collect(ctx, keep)
	if err != nil {
		return err
	}
	if removed > 0 {
		m.log.Info().Int("blobs", removed).Msg("checkpoint: blobs no checkpoint names removed")
	}
	m.total, m.stale, m.counted = total, false, true
	return nil
}

// Total returns the bytes in the blob store.
func (m *Manager) Total() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total
}
