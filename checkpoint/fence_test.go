package checkpoint

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
)

// downLeases are Leases whose store answers only while up.
type downLeases struct {
	mu     sync.Mutex
	up     bool
	holder map[string]string
}

var errDown = errors.New("database does not answer")

func (l *downLeases) AcquireLease(_ context.Context, name, holder string, _ time.Duration) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.up {
		return false, errDown
	}
	if h, ok := l.holder[name]; ok && h != holder {
		return false, nil
	}
	l.holder[name] = holder
	return true, nil
}

func (l *downLeases) ReleaseLease(_ context.Context, name, holder string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.up {
		return errDown
	}
	if l.holder[name] == holder {
		delete(l.holder, name)
	}
	return nil
}

func (l *downLeases) LeaseHoldersOf(context.Context, string) ([]string, error) {
	return nil, nil
}

func (l *downLeases) setUp(up bool) {
	l.mu.Lock()
	l.up = up
	l.mu.Unlock()
}

// fenceLog records what the fence is told.
type fenceLog struct {
	mu     sync.Mutex
	events []string
}

func (f *fenceLog) Renewed(key string, _ time.Time) { f.add("renewed " + key) }
func (f *fenceLog) Released(key string)             { f.add("released " + key) }
func (f *fenceLog) add(e string) {
	f.mu.Lock()
	f.events = append(f.events, e)
	f.mu.Unlock()
}

func (f *fenceLog) count(e string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, x := range f.events {
		if x == e {
			n++
		}
	}
	return n
}

// TestChangingCallWaitsForTheRunLease: a changing call does not begin
// while its instance's run lease cannot be taken (an /undo on another
// instance would not see it); it begins once the lease is held, the
// fence told of each renewal and of the release.
func TestChangingCallWaitsForTheRunLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		leases := &downLeases{holder: map[string]string{}}
		fence := &fenceLog{}
		h := &clusterHold{leases: leases, instance: "a", ttl: ttl, fence: fence, log: zerolog.Nop()}
		entered := make(chan struct{})
		go func() {
			h.enter(context.Background())
			close(entered)
		}()
		time.Sleep(ttl)
		synctest.Wait()
		select {
		case <-entered:
			t.Fatal("the changing call began without its run lease")
		default:
		}
		leases.setUp(true)
		<-entered
		key := runLease + "a"
		if got := fence.count("renewed " + key); got != 1 {
			t.Errorf("fence told of %d renewals at the take; want 1", got)
		}
		time.Sleep(ttl/3 + time.Millisecond)
		synctest.Wait()
		if got := fence.count("renewed " + key); got != 2 {
			t.Errorf("fence told of %d renewals after ttl/3; want 2", got)
		}
		h.leave()
		if got := fence.count("released " + key); got != 1 {
			t.Errorf("fence told of %d releases; want 1", got)
		}
	})
}

// TestChangingCallGivesUpWhenItsContextEnds: while the lease cannot be
// taken, the call's context (which the fence ends) bounds the wait.
func TestChangingCallGivesUpWhenItsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leases := &downLeases{holder: map[string]string{}}
		h := &clusterHold{leases: leases, instance: "a", ttl: time.Second, log: zerolog.Nop()}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		h.enter(ctx)
		if ctx.Err() == nil {
			t.Fatal("enter returned before the lease was held or the context ended")
		}
		h.leave()
	})
}
