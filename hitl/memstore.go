package hitl

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// MemoryStore keeps approvals and the audit log in process memory. It is the
// default when no persistent store is configured; everything is lost on
// restart. It is safe for concurrent use.
type MemoryStore struct {
	mu        sync.Mutex
	approvals map[string]*record.Approval
	order     []string // tokens in creation order
	audit     []record.AuditEntry
}

var (
	_ Store = (*MemoryStore)(nil)
	_ Audit = (*MemoryStore)(nil)
)

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{approvals: make(map[string]*record.Approval)}
}

// CreateApproval stores a; a token already stored gives record.ErrDuplicate.
func (m *MemoryStore) CreateApproval(_ context.Context, a record.Approval) error {
	if a.Token == "" {
		return fmt.Errorf("hitl: create approval: empty token")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.approvals[a.Token]; ok {
		return fmt.Errorf("hitl: create approval: %w", record.ErrDuplicate)
	}
	m.approvals[a.Token] = &a
	m.order = append(m.order, a.Token)
	return nil
}

// Approval returns the approval with the token, or record.ErrNotFound.
func (m *MemoryStore) Approval(_ context.Context, token string) (record.Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.approvals[token]
	if !ok {
		return record.Approval{}, record.ErrNotFound
	}
	return *a, nil
}

// ClaimApproval atomically moves a pending approval whose Expires is after
// now to to (record.StatusExecuting or record.StatusDenied).
func (m *MemoryStore) ClaimApproval(_ context.Context, token string, to record.Status, by core.Identity, note string, now time.Time) (record.Approval, error) {
	if to != record.StatusExecuting && to != record.StatusDenied {
		return record.Approval{}, fmt.Errorf("hitl: claim approval: cannot claim to %q", to)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.approvals[token]
	if !ok {
		return record.Approval{}, record.ErrNotFound
	}
	if a.Status != record.StatusPending || !now.Before(a.Expires) {
		return *a, record.ErrNotPending
	}
	a.Status, a.ResolvedBy, a.ResolvedAt, a.Note = to, by, now, note
	return *a, nil
}

// FinishApproval records the end state of an approval; see Store.
func (m *MemoryStore) FinishApproval(_ context.Context, token string, to record.Status, note string, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.approvals[token]
	if !ok {
		return record.ErrNotFound
	}
	switch to {
	case record.StatusExecuted, record.StatusFailed, record.StatusInterrupted:
		if a.Status != record.StatusExecuting {
			return record.ErrNotPending
		}
	case record.StatusExpired:
		if a.Status != record.StatusPending || now.Before(a.Expires) {
			return record.ErrNotPending
		}
		a.ResolvedAt = now
	default:
		return fmt.Errorf("hitl: finish approval: cannot finish to %q", to)
	}
	a.Status, a.Note = to, note
	return nil
}

// Approvals lists the approvals with one of the statuses (all when none is
// given), oldest first.
func (m *MemoryStore) Approvals(_ context.Context, statuses ...record.Status) ([]record.Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []record.Approval
	for _, tok := range m.order {
		a := m.approvals[tok]
		if len(statuses) == 0 || slices.Contains(statuses, a.Status) {
			out = append(out, *a)
		}
	}
	// sort.SliceStable: see TestReleaseSortsShareOneShape (internal/archtest).
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

// AppendAudit appends e to the log.
func (m *MemoryStore) AppendAudit(_ context.Context, e record.AuditEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.audit = append(m.audit, e)
	return nil
}

// QueryAudit returns the entries matching f, oldest first.
func (m *MemoryStore) QueryAudit(_ context.Context, f record.AuditFilter) ([]record.AuditEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []record.AuditEntry
	for _, e := range m.audit {
		if f.Matches(e) {
			out = append(out, e)
		}
	}
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[len(out)-f.Limit:]
	}
	return out, nil
}

// MarkReminded sets Reminded on a pending, unexpired approval not
// reminded before; see Store.
func (m *MemoryStore) MarkReminded(_ context.Context, token string, now time.Time) error {
	return m.nudge(token, now, func(a *record.Approval) bool {
		if !a.Reminded.IsZero() {
			return false
		}
		a.Reminded = now
		return true
	})
}

// MarkEscalated takes escalation step step of a pending, unexpired
// approval that has taken step steps; see Store.
func (m *MemoryStore) MarkEscalated(_ context.Context, token string, step int, now time.Time) error {
	return m.nudge(token, now, func(a *record.Approval) bool {
		if a.Escalated != step {
			return false
		}
		a.Escalated++
		return true
	})
}

// nudge applies change to a pending approval whose Expires is after now;
// change reports whether its own condition held.
func (m *MemoryStore) nudge(token string, now time.Time, change func(a *record.Approval) bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.approvals[token]
	if !ok {
		return record.ErrNotFound
	}
	if a.Status != record.StatusPending || !now.Before(a.Expires) || !change(a) {
		return record.ErrNotPending
	}
	return nil
}
