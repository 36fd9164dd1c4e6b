package app

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/internal/startup"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store"
)

// pruneStore is a store whose Prune reports n removed messages, or err.
type pruneStore struct {
	store.Store // only Prune is called
	calls       atomic.Int32
	n           int64
	err         error
}

func (s *pruneStore) Prune(context.Context) (int64, error) {
	s.calls.Add(1)
	return s.n, s.err
}

// TestPruneLoop: every tick prunes and logs how many messages went; a
// failure is logged and the loop goes on; the loop ends with its context.
func TestPruneLoop(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   *pruneStore
		want string
	}{
		{"removed", &pruneStore{n: 7}, `"removed":7`},
		{"failed", &pruneStore{err: errors.New("disk gone")}, "pruning history failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &testutil.SyncBuffer{}
			cfg := config.Default(gatewaytable.Specs())
			a := &App{cfg: cfg, store: tc.st, log: zerolog.New(logs)}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- a.pruneLoop(ctx, time.Millisecond) }()
			// It keeps going after the first.
			testutil.WaitFor(t, "a second prune", func() bool { return tc.st.calls.Load() >= 2 })
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("pruneLoop = %v; want nil when its context ends", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("pruneLoop did not end with its context")
			}
			if !strings.Contains(logs.String(), tc.want) {
				t.Errorf("log %q does not contain %q", logs.String(), tc.want)
			}
		})
	}
}

// TestFirstPruneWaitsForTheFirstReceive: the store leaves its first prune
// to the bot, which runs it once a gateway first receives, not before (it
// delayed the first poll), and quietly when it removed nothing; without
// a retention there is no daily prune after it.
func TestFirstPruneWaitsForTheFirstReceive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &testutil.SyncBuffer{}
		st := &pruneStore{}
		cfg := config.Default(gatewaytable.Specs())
		cfg.Store.Retention = 0
		a := &App{cfg: cfg, store: st, log: zerolog.New(logs)}
		recv := startup.NewReceiving()
		done := make(chan error, 1)
		go func() { done <- a.pruneAfter(t.Context(), recv) }()
		synctest.Wait()
		if n := st.calls.Load(); n != 0 {
			t.Fatalf("%d prunes before the first receive; want none", n)
		}
		recv.Open()
		if err := <-done; err != nil {
			t.Fatalf("pruneAfter = %v", err)
		}
		if n := st.calls.Load(); n != 1 {
			t.Fatalf("%d prunes after the first receive; want 1", n)
		}
		if logs.String() != "" {
			t.Errorf("a first prune that removed nothing logged %q", logs.String())
		}
	})
}
