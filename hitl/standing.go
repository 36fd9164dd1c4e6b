package hitl

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/gatehouse-bot/gatehouse/store/record"
)

// StandingStore keeps standing allows. The contract every implementation must
// meet is the test hitltest.StandingContract.
type StandingStore interface {
	// AddStandingAllow stores s (its ID is ignored) and returns it with its
	// ID. Adding a tool and args already allowed keeps that allow's ID and
	// replaces its AddedBy, Added, Conv and Files with s's.
	AddStandingAllow(ctx context.Context, s record.StandingAllow) (record.StandingAllow, error)
	// StandingAllows lists all standing allows, in ID order.
	StandingAllows(ctx context.Context) ([]record.StandingAllow, error)
	// RemoveStandingAllow deletes the allow with the ID and returns it, or
	// record.ErrNotFound.
	RemoveStandingAllow(ctx context.Context, id int64) (record.StandingAllow, error)
	// StandingAllowFor returns the allow for tool with exactly args, or
	// record.ErrNotFound.
	StandingAllowFor(ctx context.Context, tool, args string) (record.StandingAllow, error)
}

// MemoryStanding is an in-process StandingStore, safe for concurrent use.
type MemoryStanding struct {
	mu     sync.Mutex
	next   int64 // numbers standing allows and grants alike
	allows []record.StandingAllow
	grants []record.Grant // grant.go
}

var _ StandingStore = (*MemoryStanding)(nil)

// NewMemoryStanding returns an empty MemoryStanding.
func NewMemoryStanding() *MemoryStanding { return &MemoryStanding{} }

// AddStandingAllow stores s, or updates the allow of the same tool and args.
func (m *MemoryStanding) AddStandingAllow(_ context.Context, s record.StandingAllow) (record.StandingAllow, error) {
	if s.Tool == "" {
		return record.StandingAllow{}, fmt.Errorf("hitl: add standing allow: empty tool name")
	}
	s.Files = maps.Clone(s.Files)
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, a := range m.allows {
		if a.Tool == s.Tool && a.Args == s.Args {
			s.ID = a.ID
			m.allows[i] = s
			return cloneAllow(s), nil
		}
	}
	m.next++
	s.ID = m.next
	m.allows = append(m.allows, s)
	return cloneAllow(s), nil
}

// StandingAllows lists the allows in ID order.
func (m *MemoryStanding) StandingAllows(_ context.Context) ([]record.StandingAllow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]record.StandingAllow, len(m.allows))
	for i, a := range m.allows {
		out[i] = cloneAllow(a)
	}
	return out, nil
}

// RemoveStandingAllow deletes the allow with the ID.
func (m *MemoryStanding) RemoveStandingAllow(_ context.Context, id int64) (record.StandingAllow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, a := range m.allows {
		if a.ID == id {
			m.allows = append(m.allows[:i], m.allows[i+1:]...)
			return a, nil
		}
	}
	return record.StandingAllow{}, record.ErrNotFound
}

// StandingAllowFor returns the allow for tool with exactly args.
func (m *MemoryStanding) StandingAllowFor(_ context.Context, tool, args string) (record.StandingAllow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.allows {
		if a.Tool == tool && a.Args == args {
			return cloneAllow(a), nil
		}
	}
	return record.StandingAllow{}, record.ErrNotFound
}

// cloneAllow copies a, so callers cannot change the stored Files.
func cloneAllow(a record.StandingAllow) record.StandingAllow {
	a.Files = maps.Clone(a.Files)
	return a
}
