package telegram

import (
	"strconv"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func withLease(l gateways.Leaser, holder string) option {
	return func(_ *Config, d *Deps) {
		d.Lease = &gateways.LeaseConfig{Leaser: l, Holder: holder, TTL: 600 * time.Millisecond}
	}
}

// TestPollingRunsUnderTheLease: two instances of one bot on a shared
// store: only the lease's holder polls (Telegram answers a second
// concurrent getUpdates with 409); the other stands by, ready, and never
// polls; when the holder stops, it releases the lease and the other takes
// over from the stored offset: nothing replayed, nothing lost.
func TestPollingRunsUnderTheLease(t *testing.T) {
	store := &memStore{}
	leases := gatewaytest.NewLeases()
	fake := newFake()
	a := newHarnessOn(t, fake, withCursors(store), withLease(leases, "a"))
	b := newHarnessOn(t, fake, withCursors(store), withLease(leases, "b"))
	name := "telegram:" + strconv.FormatInt(a.gw.Self().ID, 10)
	a.start()
	testutil.WaitFor(t, "a holding the lease and polling", func() bool {
		h, _ := leases.Holder(name)
		return h == "a" && fake.Calls("getUpdates") >= 1
	})
	b.start()
	// b's Run starts on its own goroutine: wait until it stands by.
	testutil.WaitFor(t, "b standing by, ready", func() bool { return b.gw.Ready() == nil })
	fake.InjectMessage(dm(alice, "one"))
	if s := a.inbox.Next(t); s.Text != "one" {
		t.Fatalf("a got %+v, want one", s)
	}
	if h, _ := leases.Holder(name); h != "a" {
		t.Fatalf("lease held by %q while a runs", h)
	}
	if b.gw.lastPoll.Load() != 0 {
		t.Fatal("b polled while a held the lease")
	}
	if err := b.gw.Ready(); err != nil {
		t.Fatalf("b standing by is not ready any more: %v", err)
	}
	b.inbox.Empty(t)

	a.stop()
	if h, _ := leases.Holder(name); h == "a" {
		t.Fatal("a stopped and kept the lease")
	}
	testutil.WaitFor(t, "b taking the lease over", func() bool {
		h, _ := leases.Holder(name)
		return h == "b" && b.gw.lastPoll.Load() != 0
	})
	fake.InjectMessage(dm(alice, "two"))
	if s := b.inbox.Next(t); s.Text != "two" {
		t.Fatalf("b got %+v after the takeover, want two (one was a's)", s)
	}
	b.inbox.Empty(t)
	a.inbox.Empty(t)
}
