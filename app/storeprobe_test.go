package app

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
)

// countingStore counts its cursor reads, which fail while down is set.
type countingStore struct {
	pingStore
	reads atomic.Int64
}

func (s *countingStore) Cursor(ctx context.Context, key string) (string, error) {
	s.reads.Add(1)
	return s.pingStore.Cursor(ctx, key)
}

// TestStoreProbe: a flood of probes within probeFresh pings the store
// once; a store that stops answering is logged once, however often it is
// probed, and once again when it answers; the guarded inbox refuses with
// core.ErrUnavailable meanwhile and hands the signal over otherwise.
func TestStoreProbe(t *testing.T) {
	st := &countingStore{}
	var logs bytes.Buffer
	p := newStoreProbe(st, zerolog.New(&logs))
	var clock atomic.Int64
	p.now = func() time.Time { return time.Unix(0, clock.Load()) }
	later := func() { clock.Add(int64(2 * probeFresh)) }
	ctx := context.Background()

	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if err := p.check(ctx); err != nil {
				t.Errorf("check with the store up: %v", err)
			}
		})
	}
	wg.Wait()
	if n := st.reads.Load(); n != 1 {
		t.Errorf("50 probes within probeFresh read the store %d times; want 1", n)
	}

	engine := &recordingInbox{}
	in := guardedInbox{inbox: engine, probe: p}
	st.down.Store(true)
	for range 3 {
		later()
		if err := in.Submit(ctx, core.Signal{Kind: core.KindMessage, Text: "hi"}); !errors.Is(err, core.ErrUnavailable) {
			t.Errorf("Submit with the store down: %v; want core.ErrUnavailable", err)
		}
	}
	if len(engine.got) != 0 {
		t.Errorf("the engine was handed %d signals while the store was down", len(engine.got))
	}
	st.down.Store(false)
	later()
	if err := in.Submit(ctx, core.Signal{Kind: core.KindMessage, Text: "hi"}); err != nil || len(engine.got) != 1 {
		t.Errorf("Submit with the store back: %v, %d signals handed over; want nil, 1", err, len(engine.got))
	}
	later()
	if err := p.check(ctx); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"store: not answering", "store: answering again"} {
		if n := strings.Count(logs.String(), line); n != 1 {
			t.Errorf("the log says %q %d times; want once:\n%s", line, n, logs.String())
		}
	}
}

// recordingInbox records what is submitted to it.
type recordingInbox struct {
	mu  sync.Mutex
	got []core.Signal
}

func (r *recordingInbox) Submit(_ context.Context, s core.Signal) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, s)
	return nil
}
