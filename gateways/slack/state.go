package slack

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// recentSet remembers the last n keys added (event ids, threads), a
// bounded memory: the oldest is forgotten first.
type recentSet struct {
	mu   sync.Mutex
	set  map[string]bool
	ring []string
	next int
}

func newRecentSet(n int) *recentSet {
	return &recentSet{set: make(map[string]bool, n), ring: make([]string, 0, n)}
}

// add records key and reports whether it was new.
func (r *recentSet) add(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.set[key] {
		return false
	}
	if len(r.ring) < cap(r.ring) {
		r.ring = append(r.ring, key)
	} else {
		delete(r.set, r.ring[r.next])
		r.ring[r.next] = key
		r.next = (r.next + 1) % len(r.ring)
	}
	r.set[key] = true
	return true
}

// has reports whether key is remembered.
func (r *recentSet) has(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.set[key]
}

// slashKeep is how long a slash command waits for its answer: the life of
// Slack's response_url.
const slashKeep = 30 * time.Minute

// slashPrefix starts the message ids the gateway gives slash commands.
const slashPrefix = "slash:"

// slashCall is a slash command handed to the engine, awaiting its answer.
type slashCall struct {
	channel     string
	thread      string // where a press happened; "" for slash commands
	user        string
	responseURL string
	at          time.Time
}

// slashBook remembers slash commands by the message id their signal
// carries: the broker answers with that id as ReplyTo, and the answer goes
// to the invoking user only (the response_url, or chat.postEphemeral).
type slashBook struct {
	mu sync.Mutex
	n  atomic.Uint64
	m  map[string]slashCall
}

func newSlashBook() *slashBook { return &slashBook{m: make(map[string]slashCall)} }

// add remembers c and returns its message id.
func (b *slashBook) add(c slashCall) string {
	id := slashPrefix + strconv.FormatUint(b.n.Add(1), 10)
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, old := range b.m {
		if c.at.Sub(old.at) > slashKeep {
			delete(b.m, k)
		}
	}
	b.m[id] = c
	return id
}

// get returns the slash command of message id.
func (b *slashBook) get(id string) (slashCall, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.m[id]
	return c, ok
}
