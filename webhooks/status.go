package webhooks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// stats are one webhook's counts since start and its last delivery.
type stats struct {
	mu     sync.Mutex
	counts map[string]int64
	last   time.Time
	lastOf string
}

func (st *stats) count(outcome string, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.counts == nil {
		st.counts = map[string]int64{}
	}
	st.counts[outcome]++
	st.last, st.lastOf = now, outcome
}

func (st *stats) copyFrom(o *stats) {
	o.mu.Lock()
	defer o.mu.Unlock()
	st.counts = make(map[string]int64, len(o.counts))
	for k, v := range o.counts {
		st.counts[k] = v
	}
	st.last, st.lastOf = o.last, o.lastOf
}

// line is the webhook's /status line.
func (st *stats) line(h *Hook) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	last := "no delivery yet"
	if !st.last.IsZero() {
		last = "last delivery " + st.last.UTC().Format("2006-01-02 15:04:05 MST") + " (" + st.lastOf + ")"
	}
	var counts []string
	for k, v := range st.counts {
		counts = append(counts, fmt.Sprintf("%s %d", k, v))
	}
	slices.Sort(counts)
	if len(counts) > 0 {
		last += "; " + strings.Join(counts, ", ")
	}
	return fmt.Sprintf("  %s (%s) → %s: %s", h.Name, h.Format, h.Conv.Key(), last)
}

var _ core.StatusReporter = (*Server)(nil)

// StatusLines lists the webhooks for /status with their last delivery
// and counts on this instance since it started.
func (s *Server) StatusLines(context.Context, core.Conversation) []string {
	hooks := *s.hooks.Load()
	if len(hooks) == 0 {
		return nil
	}
	names := make([]string, 0, len(hooks))
	for n := range hooks {
		names = append(names, n)
	}
	slices.Sort(names)
	lines := []string{"Webhooks (this instance):"}
	for _, n := range names {
		lines = append(lines, hooks[n].stats.line(&hooks[n].hook))
	}
	return lines
}
