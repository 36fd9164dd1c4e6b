package hitl

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// StandingAllow lets exactly one tool with exactly one arguments JSON text run
// without approval from now on ("/approve TOKEN always"). Args is compared by
// string equality: never a prefix, a pattern or a bare program name.
type StandingAllow struct {
	// ID numbers the allow for /rules and /unallow; the store assigns it.
	ID      int64
	Tool    string
	Args    string
	AddedBy core.Identity
	Added   time.Time
	// Conv is the conversation whose request was approved with "always".
	Conv string
}

// StandingStore keeps standing allows. The contract every implementation must
// meet is the test hitltest.StandingContract.
type StandingStore interface {
	// AddStandingAllow stores s (its ID is ignored) and returns it with its
	// ID. Adding a tool and args already allowed returns the existing allow.
	AddStandingAllow(ctx context.Context, s StandingAllow) (StandingAllow, error)
	// StandingAllows lists all standing allows, in ID order.
	StandingAllows(ctx context.Context) ([]StandingAllow, error)
	// RemoveStandingAllow deletes the allow with the ID and returns it, or
	// ErrNotFound.
	RemoveStandingAllow(ctx context.Context, id int64) (StandingAllow, error)
	// StandingAllowed reports whether tool with exactly args is allowed.
	StandingAllowed(ctx context.Context, tool, args string) (bool, error)
}

// MemoryStanding is an in-process StandingStore, safe for concurrent use.
type MemoryStanding struct {
	mu     sync.Mutex
	next   int64
	allows []StandingAllow
}

var _ StandingStore = (*MemoryStanding)(nil)

// NewMemoryStanding returns an empty MemoryStanding.
func NewMemoryStanding() *MemoryStanding { return &MemoryStanding{} }

// AddStandingAllow stores s unless the same tool and args are already allowed.
func (m *MemoryStanding) AddStandingAllow(_ context.Context, s StandingAllow) (StandingAllow, error) {
	if s.Tool == "" {
		return StandingAllow{}, fmt.Errorf("hitl: add standing allow: empty tool name")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.allows {
		if a.Tool == s.Tool && a.Args == s.Args {
			return a, nil
		}
	}
	m.next++
	s.ID = m.next
	m.allows = append(m.allows, s)
	return s, nil
}

// StandingAllows lists the allows in ID order.
func (m *MemoryStanding) StandingAllows(_ context.Context) ([]StandingAllow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]StandingAllow, len(m.allows))
	copy(out, m.allows)
	return out, nil
}

// RemoveStandingAllow deletes the allow with the ID.
func (m *MemoryStanding) RemoveStandingAllow(_ context.Context, id int64) (StandingAllow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, a := range m.allows {
		if a.ID == id {
			m.allows = append(m.allows[:i], m.allows[i+1:]...)
			return a, nil
		}
	}
	return StandingAllow{}, ErrNotFound
}

// StandingAllowed reports whether tool with exactly args is allowed.
func (m *MemoryStanding) StandingAllowed(_ context.Context, tool, args string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.allows {
		if a.Tool == tool && a.Args == args {
			return true, nil
		}
	}
	return false, nil
}
