package console_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/console"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// firstRefused refuses its first signal as a store that does not answer
// does (core.ErrUnavailable) and records the others.
type firstRefused struct {
	mu    sync.Mutex
	calls int
	got   []string
}

func (f *firstRefused) Submit(_ context.Context, s core.Signal) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls++; f.calls == 1 {
		return fmt.Errorf("%w: the test's store is down", core.ErrUnavailable)
	}
	f.got = append(f.got, s.Text)
	return nil
}

// TestStoreDownSaysTryAgain: a line typed while the store does not answer
// is answered "temporarily unavailable, try again" (the console has no
// redelivery) and reading goes on: the next line is submitted.
func TestStoreDownSaysTryAgain(t *testing.T) {
	out := &testutil.SyncBuffer{}
	c := console.New(strings.NewReader("while down\nagain\n"), out, false)
	in := &firstRefused{}
	if err := c.Run(context.Background(), in); err != nil {
		t.Fatalf("Run: %v; want nil (a refused line is answered, not an error)", err)
	}
	if !strings.Contains(out.String(), gateways.UnavailableNote) {
		t.Errorf("the console printed %q; want %q", out.String(), gateways.UnavailableNote)
	}
	if strings.Join(in.got, "|") != "again" {
		t.Errorf("submitted %q; want the next line", in.got)
	}
}
