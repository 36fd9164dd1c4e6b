package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
)

// ReplyOnceStore is what ReplyOnceContract tests.
type ReplyOnceStore interface {
	store.Inbox
	store.InboxReplies
	store.Outbox
}

// ReplyOnceContract tests store.InboxReplies and the outbox's link to the
// inbox on two handles a and b (two instances on one database): the
// reply's text is recorded with its stage by the holder of a live claim
// only, and read back by either handle; of two replies of one inbox entry
// only the first is written (ErrReplyExists, whichever handle), while
// replies of no entry, or of another, are written as before. newPair must
// make both handles read their time from now.
func ReplyOnceContract(t *testing.T, newPair func(t *testing.T, now func() time.Time) (a, b ReplyOnceStore)) {
	t.Helper()
	ctx := context.Background()
	clock := NewClock(clusterEpoch)
	a, b := newPair(t, clock.Now)
	id, _, err := a.PutInbox(ctx, store.InboxEntry{Gateway: "alpha", Key: "1/1", Conv: "alpha:1", Data: []byte("m"), Receiver: "a"}, 0)
	if err != nil {
		t.Fatalf("PutInbox: %v", err)
	}
	if text, err := b.InboxReply(ctx, id); err != nil || text != "" {
		t.Fatalf("InboxReply before any = %q, %v; want \"\"", text, err)
	}
	if _, ok, err := a.ClaimInbox(ctx, "a", []string{"alpha"}, 15*time.Second); err != nil || !ok {
		t.Fatalf("ClaimInbox = %v, %v", ok, err)
	}
	if err := b.SetInboxReply(ctx, id, "b", 3, "not b's"); !errors.Is(err, store.ErrNotHeld) {
		t.Fatalf("SetInboxReply by a non-holder = %v; want ErrNotHeld", err)
	}
	if err := a.SetInboxReply(ctx, id, "a", 3, "the answer"); err != nil {
		t.Fatalf("SetInboxReply: %v", err)
	}
	clock.Set(clock.Now().Add(16 * time.Second))
	e, ok, err := b.ClaimInbox(ctx, "b", []string{"alpha"}, 15*time.Second)
	if err != nil || !ok || e.ID != id || e.Stage != 3 {
		t.Fatalf("takeover claim = %+v, %v, %v; want entry %d at stage 3", e, ok, err, id)
	}
	if text, err := b.InboxReply(ctx, id); err != nil || text != "the answer" {
		t.Fatalf("InboxReply = %q, %v; want the answer", text, err)
	}
	if err := a.SetInboxReply(ctx, id, "a", 3, "late"); !errors.Is(err, store.ErrNotHeld) {
		t.Fatalf("SetInboxReply by the old holder = %v; want ErrNotHeld", err)
	}

	reply := func(s ReplyOnceStore, composer string, inboxID int64) (int64, error) {
		return s.AddReply(ctx, store.OutboxReply{Sender: "alpha:9", Gateway: "alpha", Chat: "1", Text: "the answer",
			Composer: composer, InboxID: inboxID})
	}
	first, err := reply(b, "b", id)
	if err != nil || first == 0 {
		t.Fatalf("AddReply of entry %d = %d, %v", id, first, err)
	}
	for _, s := range []ReplyOnceStore{a, b} {
		if got, err := reply(s, "a", id); !errors.Is(err, store.ErrReplyExists) {
			t.Fatalf("a second AddReply of entry %d = %d, %v; want ErrReplyExists", id, got, err)
		}
	}
	for _, inboxID := range []int64{0, 0, id + 1} {
		if got, err := reply(a, "a", inboxID); err != nil || got == 0 {
			t.Fatalf("AddReply of entry %d = %d, %v; want written", inboxID, got, err)
		}
	}
}
