package cluster

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/store"
)

// claims is a MemberStore whose ClaimInstance answers from a script: the
// rows another process holds, one a call, then the claim granted.
type claims struct {
	MemberStore
	mu    sync.Mutex
	held  []store.Instance
	calls int
}

func (c *claims) ClaimInstance(_ context.Context, in store.Instance, _ time.Duration) (store.Instance, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if len(c.held) == 0 {
		return in, true, nil
	}
	h := c.held[0]
	c.held = c.held[1:]
	return h, false, nil
}

// TestClaimNameWaitsOutACrashedHeartbeat: a heartbeat under the name
// that is not renewed (a crashed process's) is waited out, and the name
// then taken; one renewed while ClaimName watches (a live process's) is
// refused with ErrInstanceInUse, naming the name and how to choose
// another.
func TestClaimNameWaitsOutACrashedHeartbeat(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	old := store.Instance{Name: "a", Process: "old", LastSeen: t0}
	st := &claims{held: []store.Instance{old, old, old}}
	c := NewMember(st, "a", "v1", t0, zerolog.Nop())
	if err := c.ClaimName(context.Background(), time.Second, time.Millisecond); err != nil {
		t.Fatalf("ClaimName past a heartbeat not renewed: %v; want the name taken", err)
	}
	if st.calls != 4 {
		t.Errorf("ClaimName asked %d times; want 4 (three refusals, then the claim)", st.calls)
	}

	renewed := old
	renewed.LastSeen = t0.Add(300 * time.Millisecond)
	st = &claims{held: []store.Instance{old, old, renewed, renewed}}
	c = NewMember(st, "a", "v1", t0, zerolog.Nop())
	err := c.ClaimName(context.Background(), time.Second, time.Millisecond)
	if !errors.Is(err, ErrInstanceInUse) {
		t.Fatalf("ClaimName against a renewed heartbeat: %v; want ErrInstanceInUse", err)
	}
	for _, want := range []string{`"a"`, "store.instance", "GATEHOUSE_INSTANCE"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not contain %q", err, want)
		}
	}
}
