package telegram

import (
	"context"
	"sync"
)

// memCursors keeps cursors in memory when no store is given.
type memCursors struct {
	mu sync.Mutex
	m  map[string]string
}

func newMemCursors() *memCursors { return &memCursors{m: make(map[string]string)} }

// Cursor returns the stored value, "" when unset.
func (c *memCursors) Cursor(_ context.Context, key string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key], nil
}

// SetCursor stores value.
func (c *memCursors) SetCursor(_ context.Context, key, value string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key] = value
	return nil
}

// recentIDs remembers the last n update ids, to drop a webhook update
// Telegram delivers twice.
type recentIDs struct {
	mu   sync.Mutex
	set  map[int]bool
	ring []int
	next int
}

func newRecentIDs(n int) *recentIDs {
	return &recentIDs{set: make(map[int]bool, n), ring: make([]int, 0, n)}
}

// add records id and reports whether it was new.
func (r *recentIDs) add(id int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.set[id] {
		return false
	}
	if len(r.ring) < cap(r.ring) {
		r.ring = append(r.ring, id)
	} else {
		delete(r.set, r.ring[r.next])
		r.ring[r.next] = id
		r.next = (r.next + 1) % len(r.ring)
	}
	r.set[id] = true
	return true
}

// forget removes id, so that a redelivery is handled.
func (r *recentIDs) forget(id int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.set, id)
}
