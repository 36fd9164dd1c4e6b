package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// TextContract's cluster, pairing and shared-queue parts.

func textCluster(t *testing.T, s store.Store, clock *Clock) {
	ctx := context.Background()
	if ok, err := s.ClaimScheduleSlot(ctx, raw("schedule"), clock.Now(), raw("instance")); err != nil || !ok {
		t.Fatalf("ClaimScheduleSlot = %v, %v; want claimed", ok, err)
	}
	if ok, err := s.AcquireLease(ctx, raw("lease"), raw("holder"), time.Minute); err != nil || !ok {
		t.Fatalf("AcquireLease = %v, %v; want held", ok, err)
	}
	if ls, err := s.LeaseHolders(ctx); err != nil || len(ls) != 1 || !sameText(ls[0].Holder, raw("holder")) {
		t.Fatalf("LeaseHolders = %+v, %v; want %q", ls, err, raw("holder"))
	}
	if err := s.ReleaseLease(ctx, raw("lease"), raw("holder")); err != nil {
		t.Fatalf("ReleaseLease: %v", err)
	}
	if ls, err := s.LeaseHolders(ctx); err != nil || len(ls) != 0 {
		t.Fatalf("LeaseHolders after its release = %+v, %v; want none", ls, err)
	}
	in := store.Instance{Name: raw("instance"), Version: raw("version"), Started: clock.Now()}
	if err := s.Heartbeat(ctx, in); err != nil {
		t.Fatalf("Heartbeat: %v", err)
	}
	if list, err := s.Instances(ctx, time.Minute); err != nil || len(list) != 1 || !sameText(list[0].Version, in.Version) {
		t.Fatalf("Instances = %+v, %v; want %+v", list, err, in)
	}
	if fs, ok := s.(store.ConfigFingerprints); ok {
		if err := fs.SetConfigFingerprint(ctx, in.Name, map[string]string{raw("key"): raw("hash")}); err != nil {
			t.Fatalf("SetConfigFingerprint: %v", err)
		}
		if got, err := fs.ConfigFingerprints(ctx, time.Minute); err != nil || len(got) != 1 {
			t.Fatalf("ConfigFingerprints = %v, %v; want the instance's", got, err)
		}
	}
	if err := s.RemoveInstance(ctx, in.Name); err != nil {
		t.Fatalf("RemoveInstance: %v", err)
	}
}

func textPairing(t *testing.T, s store.Store, clock *Clock) {
	ctx := context.Background()
	id := core.Identity(raw("stranger"))
	sum := sha256.Sum256([]byte("AAAA2222"))
	c := record.PairingCode{Identity: id, Conv: raw("conv"), Code: raw("code"), Hash: hex.EncodeToString(sum[:]),
		Created: clock.Now(), Expires: clock.Now().Add(time.Hour)}
	if got, err := s.OfferPairingCode(ctx, c); err != nil || !sameText(got.Code, c.Code) {
		t.Fatalf("OfferPairingCode = %+v, %v; want %+v", got, err, c)
	}
	if list, err := s.PairingCodes(ctx); err != nil || len(list) != 1 || !sameText(string(list[0].Identity), string(id)) {
		t.Fatalf("PairingCodes = %+v, %v; want %+v", list, err, c)
	}
	if p, err := s.Pair(ctx, id, c.Hash, core.Identity(raw("approver"))); err != nil || !sameText(string(p.By), raw("approver")) {
		t.Fatalf("Pair = %+v, %v; want paired by %q", p, err, raw("approver"))
	}
	if list, err := s.PairedIdentities(ctx); err != nil || len(list) != 1 || !sameText(list[0].Conv, c.Conv) {
		t.Fatalf("PairedIdentities = %+v, %v; want %q", list, err, id)
	}
	if _, err := s.Unpair(ctx, id); err != nil {
		t.Fatalf("Unpair: %v", err)
	}
}

// textQueues tests the queues of a store several instances share, those
// it has.
func textQueues(t *testing.T, s store.Store, clock *Clock) {
	ctx := context.Background()
	if o, ok := s.(store.Outbox); ok {
		r := store.OutboxReply{Sender: raw("sender"), Gateway: "console", Chat: raw("chat"), Thread: raw("thread"),
			Text: raw("reply"), Composer: raw("gone")}
		if _, err := o.AddReply(ctx, r); err != nil {
			t.Fatalf("AddReply: %v", err)
		}
		got, err := o.ClaimReplies(ctx, r.Sender, raw("instance"), time.Minute, clock.Now(), 10)
		if err != nil || len(got) != 1 || !sameText(got[0].Text, r.Text) || !sameText(got[0].Chat, r.Chat) {
			t.Fatalf("ClaimReplies = %+v, %v; want %+v", got, err, r)
		}
		if err := o.ReplyDone(ctx, got[0].ID, 1, store.ReplySent); err != nil {
			t.Fatalf("ReplyDone: %v", err)
		}
	}
	if ss, ok := s.(store.SendSlots); ok {
		if _, err := ss.ReserveSend(ctx, store.SendLimit{Key: raw("slot"), N: 1, Per: time.Second}); err != nil {
			t.Fatalf("ReserveSend: %v", err)
		}
	}
	in, ok := s.(store.Inbox)
	if !ok {
		return
	}
	e := store.InboxEntry{Gateway: raw("gateway"), Key: raw("key"), Conv: raw("conv"), Data: []byte(rawText), Receiver: raw("receiver")}
	if _, added, err := in.PutInbox(ctx, e, 0); err != nil || !added {
		t.Fatalf("PutInbox = %v, %v; want added", added, err)
	}
	got, ok, err := in.ClaimInbox(ctx, raw("holder"), []string{e.Gateway}, time.Minute)
	if err != nil || !ok || !sameText(got.Conv, e.Conv) || string(got.Data) != rawText {
		t.Fatalf("ClaimInbox of its gateway = %+v, %v, %v; want %+v", got, ok, err, e)
	}
	if err := in.SetInboxStage(ctx, got.ID, raw("holder"), 1); err != nil {
		t.Fatalf("SetInboxStage: %v", err)
	}
	if rs, ok := s.(store.InboxReplies); ok {
		if err := rs.SetInboxReply(ctx, got.ID, raw("holder"), 2, raw("reply")); err != nil {
			t.Fatalf("SetInboxReply: %v", err)
		}
		if text, err := rs.InboxReply(ctx, got.ID); err != nil || !sameText(text, raw("reply")) {
			t.Fatalf("InboxReply = %q, %v; want %q", text, err, raw("reply"))
		}
	}
	if cancelled, err := in.CancelInbox(ctx, e.Conv); err != nil || !cancelled {
		t.Fatalf("CancelInbox of its conversation = %v, %v; want cancelled", cancelled, err)
	}
	if ids, err := in.CancelledInbox(ctx, raw("holder")); err != nil || len(ids) != 1 {
		t.Fatalf("CancelledInbox of its holder = %v, %v; want its entry", ids, err)
	}
	if rr, ok := s.(store.InboxResetter); ok {
		if _, err := rr.ResetInbox(ctx, e.Conv, raw("holder")); err != nil {
			t.Fatalf("ResetInbox: %v", err)
		}
	}
	if err := in.FinishInbox(ctx, got.ID, raw("holder")); err != nil {
		t.Fatalf("FinishInbox: %v", err)
	}
}
