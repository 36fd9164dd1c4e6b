package hitl_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// The escalation cast: an on-call person of gateway beta on no approver
// list, who gets escalated requests in a direct message, and an ops
// channel the step notifies.
var (
	oncall  = core.Identity("beta:oncall")
	convOps = core.Conversation{Gateway: "alpha", Chat: "ops"}
)

// dmDispatcher is the fake dispatcher whose gateways open direct
// conversations (hitl.DirectOpener): "beta:x" → beta:dm-x.
type dmDispatcher struct{ *dispatcher }

func (d dmDispatcher) DirectConversation(_ context.Context, id core.Identity) (core.Conversation, error) {
	g, user, _ := strings.Cut(string(id), ":")
	return core.Conversation{Gateway: g, Chat: "dm-" + user}, nil
}

// dmOf is the direct conversation dmDispatcher opens with id.
func dmOf(id core.Identity) core.Conversation {
	g, user, _ := strings.Cut(string(id), ":")
	return core.Conversation{Gateway: g, Chat: "dm-" + user}
}

// nudges are the steps of these tests: a reminder after 10 minutes, one
// escalation step after 12.
var nudges = hitl.Nudges{
	RemindAfter: 10 * time.Minute,
	Escalate:    []hitl.Escalation{{After: 12 * time.Minute, Approvers: []core.Identity{oncall}, Notify: []core.Conversation{convOps}}},
}

// newNudgeHarness is a harness with nudges whose dispatcher opens direct
// conversations; opts adjusts the options further.
func newNudgeHarness(t *testing.T, opts func(*hitl.Options)) *harness {
	t.Helper()
	h := newHarness(t, func(o *hitl.Options) { o.Nudges = nudges })
	h.stop()
	o := hitl.Options{
		TTL: ttl, Approvers: []core.Identity{boss, admin}, Notify: []core.Conversation{convDM},
		AllowSelfApproval: true, Store: h.store, Standing: h.standing, Now: h.clock.Now,
		Log: zerolog.New(h.logs), SweepEvery: time.Hour, Nudges: nudges,
	}
	if opts != nil {
		opts(&o)
	}
	b, err := hitl.NewBroker(dmDispatcher{h.d}, o)
	if err != nil {
		t.Fatalf("NewBroker: %v", err)
	}
	h.b = b
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = b.Run(ctx)
	}()
	h.stop = func() { cancel(); <-done }
	t.Cleanup(h.stop)
	<-b.Ready()
	return h
}

// requests counts the approval requests of token sent to conv whose text
// contains part.
func (h *harness) requests(conv core.Conversation, token, part string) int {
	n := 0
	for _, s := range h.d.gateways[conv.Gateway].in(conv) {
		if s.Approval != nil && s.Approval.Token == token && strings.Contains(s.Request, part) {
			n++
		}
	}
	return n
}

// nudge runs the broker's reminder and escalation sweep.
func (h *harness) nudge(t *testing.T) {
	t.Helper()
	if err := h.b.NudgeDue(context.Background()); err != nil {
		t.Fatalf("NudgeDue: %v", err)
	}
}

// TestReminderOnce: a request nobody answered is sent again, with its
// buttons, to every conversation that got it, once remind_after has
// passed and only once: not by a second sweep, not by a broker started
// again on the same store (a restart).
func TestReminderOnce(t *testing.T) {
	h := newNudgeHarness(t, func(o *hitl.Options) { o.Nudges.Escalate = nil })
	tok := h.hold(t, lsCall)
	const mark = "Reminder: nobody has answered for 10 min"
	h.clock.Advance(10*time.Minute - time.Second)
	h.nudge(t)
	if n := h.requests(convA, tok, mark); n != 0 {
		t.Fatalf("reminded %d times before remind_after", n)
	}
	h.clock.Advance(time.Second)
	h.nudge(t)
	for _, c := range []core.Conversation{convA, convDM} {
		testutil.WaitFor(t, "the reminder in "+c.Key(), func() bool { return h.requests(c, tok, mark) == 1 })
	}
	h.nudge(t)
	h.clock.Advance(time.Minute)
	h.nudge(t)

	// A restart: a new broker on the same store.
	h.stop()
	again, err := hitl.NewBroker(h.d, hitl.Options{TTL: ttl, Approvers: []core.Identity{boss}, Notify: []core.Conversation{convDM},
		Store: h.store, Standing: h.standing, Now: h.clock.Now, Log: zerolog.New(h.logs), SweepEvery: time.Hour, Nudges: nudges})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.NudgeDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []core.Conversation{convA, convDM} {
		if n := h.requests(c, tok, mark); n != 1 {
			t.Errorf("%s got the reminder %d times; want once", c.Key(), n)
		}
	}
	if got := strings.Join(h.audit(t), ","); got != "requested,reminded" {
		t.Errorf("audit = %s; want requested,reminded", got)
	}
	h.say(boss, convB, "/pending")
	mustContain(t, "/pending", h.lastReply(t, convB).Text, tok, "waiting 11 min, reminded")
}

// guest delivers a typed message from id in conv as the engine does for
// a sender the allow list refused, and reports whether the broker took
// it (else it is a stranger's message).
func (h *harness) guest(id core.Identity, conv core.Conversation, text string) bool {
	return h.b.HandleGuestCommand(context.Background(), core.Signal{Kind: core.KindMessage, Conv: conv, From: id, Text: text, MessageID: "g1"})
}

// TestEscalation: past escalate.after the request reaches the step's
// notify conversation and its approver's direct message, and the asking
// conversation is told in one line. The escalation approver, on no
// approver list, may /show and approve that request from their direct
// message (it runs once), but not another request, not before it was
// escalated, and nothing else: their other messages are a stranger's.
func TestEscalation(t *testing.T) {
	h := newNudgeHarness(t, nil)
	tok := h.hold(t, lsCall)
	dm := dmOf(oncall)
	if h.guest(oncall, dm, "/approve "+tok); h.d.runs.Load() != 0 {
		t.Fatal("the escalation approver approved a request not escalated yet")
	}
	mustContain(t, "answer before the escalation", h.lastReply(t, dm).Text, "Not authorised")
	h.clock.Advance(11 * time.Minute)
	other := h.hold(t, lsCall) // raised later: not escalated with the first
	h.clock.Advance(time.Minute)
	h.nudge(t)
	const mark = "Escalated: nobody has answered for 12 min"
	for _, c := range []core.Conversation{convOps, dm} {
		testutil.WaitFor(t, "the escalated request in "+c.Key(), func() bool { return h.requests(c, tok, mark) == 1 })
	}
	// Run's own sweep may be the one escalating: the line follows the requests.
	testutil.WaitFor(t, "the line in the asking conversation", func() bool {
		return h.repliedAll(convA, "Nobody has answered request "+tok, "escalated to beta:oncall and alpha:ops")
	})
	if n := h.requests(convA, tok, mark); n != 0 {
		t.Errorf("the asking conversation got the escalated request again (%d); want one line", n)
	}
	h.nudge(t)
	if n := h.requests(dm, tok, mark); n != 1 {
		t.Errorf("escalated %d times; want once", n)
	}

	if h.guest(oncall, dm, "/pending") || h.guest(oncall, dm, "hello") || h.guest(oncall, dm, "/rules") {
		t.Error("the escalation approver's /pending, /rules or chat was taken as a command; want a stranger's message")
	}
	if !h.guest(oncall, dm, "/approve "+other) {
		t.Fatal("the escalation approver's /approve of another request was not answered")
	}
	mustContain(t, "answer to /approve of another request", h.lastReply(t, dm).Text, "Not authorised")
	if !h.guest(oncall, dm, "/show "+tok) {
		t.Fatal("/show of the escalated request not answered")
	}
	mustContain(t, "/show", h.lastReply(t, dm).Text, "Request "+tok, "ls -la /srv")
	if !h.guest(oncall, dm, "/approve "+tok) {
		t.Fatal("/approve of the escalated request not answered")
	}
	h.idle(t)
	if n := h.d.runs.Load(); n != 1 {
		t.Fatalf("runs = %d; want the escalated request run once", n)
	}
	if st := h.status(t, other); st != "pending" {
		t.Errorf("the other request is %s; want pending", st)
	}
	if got := strings.Join(h.audit(t), ","); !strings.Contains(got, "escalated") || !strings.Contains(got, "refused") || !strings.Contains(got, "approved,executed") {
		t.Errorf("audit = %s; want escalated, the refused /approve and approved, executed", got)
	}
	testutil.WaitFor(t, "the outcome in the direct message", func() bool {
		return strings.Contains(h.lastReply(t, dm).Text, "Approved by beta:oncall")
	})
}

// TestEscalationFourEyes: an escalation approver who is the requester's
// person (hitl.people) cannot approve that request with self-approval
// off; they may deny it.
func TestEscalationFourEyes(t *testing.T) {
	h := newNudgeHarness(t, func(o *hitl.Options) {
		o.AllowSelfApproval = false
		o.People = [][]core.Identity{{asker, oncall}}
	})
	tok := h.hold(t, lsCall)
	h.clock.Advance(12 * time.Minute)
	h.nudge(t)
	dm := dmOf(oncall)
	testutil.WaitFor(t, "the escalated request", func() bool { return h.requests(dm, tok, "Escalated") == 1 })
	h.guest(oncall, dm, "/approve "+tok)
	mustContain(t, "answer", h.lastReply(t, dm).Text, "another approver must approve it")
	if h.d.runs.Load() != 0 {
		t.Fatal("the requester's own person approved their request")
	}
}

// TestExpiredNoticeSaysHowLong: the expiry notice says nobody approved
// the call in the TTL and that it did not run, also in the escalated
// conversations.
func TestExpiredNoticeSaysHowLong(t *testing.T) {
	h := newNudgeHarness(t, nil)
	tok := h.hold(t, lsCall)
	h.clock.Advance(12 * time.Minute)
	h.nudge(t)
	h.clock.Advance(ttl)
	if n, err := h.b.ExpireDue(context.Background()); n != 1 || err != nil {
		t.Fatalf("ExpireDue = %d, %v", n, err)
	}
	for _, c := range []core.Conversation{convA, convDM, convOps, dmOf(oncall)} {
		got := h.lastReply(t, c)
		mustContain(t, "expiry notice in "+c.Key(), got.Text, "nobody approved shell `ls -la /srv` in 15 min", tok, "it did not run")
		if got.Resolution == nil || got.Resolution.Status != "expired" {
			t.Errorf("%s: the request message was not told it expired", c.Key())
		}
	}
}

// TestSetNudges: a reload that sets remind_after reminds the requests
// already pending; a step out of order is refused and changes nothing.
func TestSetNudges(t *testing.T) {
	h := newNudgeHarness(t, func(o *hitl.Options) { o.Nudges = hitl.Nudges{} })
	tok := h.hold(t, lsCall)
	h.clock.Advance(11 * time.Minute)
	h.nudge(t)
	if n := h.requests(convA, tok, "Reminder"); n != 0 {
		t.Fatalf("reminded %d times without remind_after", n)
	}
	bad := hitl.Nudges{Escalate: []hitl.Escalation{{After: 5 * time.Minute, Approvers: []core.Identity{oncall}}, {After: time.Minute, Approvers: []core.Identity{oncall}}}}
	if err := h.b.SetNudges(bad); err == nil {
		t.Error("SetNudges accepted steps out of order")
	}
	if err := h.b.SetNudges(nudges); err != nil {
		t.Fatal(err)
	}
	h.nudge(t)
	testutil.WaitFor(t, "the reminder after the reload", func() bool { return h.requests(convA, tok, "Reminder: nobody has answered for 11 min") == 1 })
	if n := h.requests(dmOf(oncall), tok, "Escalated"); n != 0 {
		t.Errorf("escalated before escalate.after (12 min): %d", n)
	}
}
