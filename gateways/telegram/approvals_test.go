package telegram

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func approvalRequest(conv core.Conversation, token string, always bool) core.Action {
	a := reply(conv, "Approval needed: run `rm -rf build/` (shell). Token "+token)
	a.Approval = &core.ApprovalPrompt{Token: token, Tool: "shell", Summary: "rm -rf build/", AllowAlways: always, Expires: time.Now().Add(15 * time.Minute)}
	return a
}

func TestApprovalRequestHasInlineKeyboard(t *testing.T) {
	for _, tc := range []struct {
		always bool
		want   []string
	}{
		{false, []string{"a:K7Q2", "d:K7Q2"}},
		{true, []string{"a:K7Q2", "d:K7Q2", "A:K7Q2"}},
	} {
		h := newHarness(t)
		if _, err := h.gw.Act(context.Background(), approvalRequest(convOf(group.ID), "K7Q2", tc.always)); err != nil {
			t.Fatal(err)
		}
		sent := h.fake.Sent()
		if len(sent) != 1 {
			t.Fatalf("sent %+v", sent)
		}
		var data []string
		for _, b := range sent[0].Markup.Buttons() {
			data = append(data, b.CallbackData)
		}
		if strings.Join(data, ",") != strings.Join(tc.want, ",") {
			t.Fatalf("always=%v: buttons %q, want %q", tc.always, data, tc.want)
		}
	}
}

func TestKeyboardOnlyOnTheLastChunk(t *testing.T) {
	h := newHarness(t)
	a := approvalRequest(convOf(alice.ID), "K7Q2", false)
	a.Text = longReply(6000)
	if _, err := h.gw.Act(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	sent := h.fake.Sent()
	for i, s := range sent {
		if (s.Markup != nil) != (i == len(sent)-1) {
			t.Fatalf("chunk %d of %d: markup %+v", i, len(sent), s.Markup)
		}
	}
}

func TestButtonPressCallsPressAsThePresser(t *testing.T) {
	h := newHarness(t).start()
	if _, err := h.gw.Act(context.Background(), approvalRequest(convOf(group.ID), "K7Q2", true)); err != nil {
		t.Fatal(err)
	}
	req := h.fake.Sent()[0]
	for _, tc := range []struct {
		data string
		d    core.ApprovalDecision
	}{
		{"a:K7Q2", core.DecisionApprove},
		{"d:K7Q2", core.DecisionDeny},
		{"A:K7Q2", core.DecisionApproveAlways},
	} {
		h.fake.InjectCallback(faketg.Callback{From: bob, ChatID: group.ID, MessageID: req.MessageID, Data: tc.data})
		testutil.WaitFor(t, "the press", func() bool { return len(h.appr.calls()) > 0 })
		got := h.appr.calls()[len(h.appr.calls())-1]
		want := pressCall{from: "telegram:1002", conv: convOf(group.ID), token: "K7Q2", d: tc.d}
		if got != want {
			t.Fatalf("Press %+v, want %+v", got, want)
		}
		h.appr.mu.Lock()
		h.appr.presses = nil
		h.appr.mu.Unlock()
	}
	testutil.WaitFor(t, "three answers", func() bool { return len(h.fake.Answers()) == 3 })
	for _, a := range h.fake.Answers() {
		if a.Text != "Approved." {
			t.Fatalf("answer %+v", a)
		}
	}
}

func TestUnknownButtonAnsweredWithoutPress(t *testing.T) {
	h := newHarness(t).start()
	long := strings.Repeat("é", 300)
	h.appr.reply = long
	h.fake.InjectCallback(faketg.Callback{From: alice, ChatID: alice.ID, MessageID: 1, Data: "zz"})
	h.fake.InjectCallback(faketg.Callback{From: alice, ChatID: alice.ID, MessageID: 1, Data: "d:T1"})
	testutil.WaitFor(t, "two answers", func() bool { return len(h.fake.Answers()) == 2 })
	calls := h.appr.calls()
	if len(calls) != 1 || calls[0].token != "T1" || calls[0].from != "telegram:1001" {
		t.Fatalf("presses %+v", calls)
	}
	texts := map[string]bool{}
	for _, a := range h.fake.Answers() {
		texts[a.Text] = true
		if gateways.UTF16Len(a.Text) > 200 {
			t.Fatalf("toast of %d units", gateways.UTF16Len(a.Text))
		}
	}
	if !texts["Unknown button."] {
		t.Fatalf("answers %+v", h.fake.Answers())
	}
}

func TestResolutionEditsTheRequestMessage(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if _, err := h.gw.Act(ctx, approvalRequest(convOf(group.ID), "K7Q2", false)); err != nil {
		t.Fatal(err)
	}
	req := h.fake.Sent()[0]
	at := time.Date(2026, 5, 1, 14, 3, 0, 0, time.UTC)
	res := reply(convOf(group.ID), "Approved by telegram:1001; running it now.")
	res.Resolution = &core.ApprovalResolution{Token: "K7Q2", Status: "approved", By: "telegram:1001", At: at}
	if _, err := h.gw.Act(ctx, res); err != nil {
		t.Fatal(err)
	}
	edited, _ := h.fake.Message(group.ID, req.MessageID)
	if edited.Markup != nil {
		t.Fatalf("buttons left on the request: %+v", edited.Markup)
	}
	for _, want := range []string{"rm -rf build/", "Approved by telegram:1001", "2026-05-01 14:03 UTC"} {
		if !strings.Contains(edited.Plain, want) {
			t.Fatalf("edited request %q lacks %q", edited.Plain, want)
		}
	}
	last := h.fake.Sent()[len(h.fake.Sent())-1]
	if last.Method != "sendMessage" || !strings.Contains(last.Plain, "running it now") {
		t.Fatalf("resolution reply %+v", last)
	}
	// The same resolution announced again (to another conversation) does
	// not edit the request a second time.
	again := res
	again.Conv, again.Text = convOf(alice.ID), ""
	if _, err := h.gw.Act(ctx, again); err != nil {
		t.Fatal(err)
	}
	if n := h.fake.Calls("editMessageText"); n != 1 {
		t.Fatalf("%d edits for one resolution", n)
	}
	// A later status (executed) edits the request again.
	res.Resolution = &core.ApprovalResolution{Token: "K7Q2", Status: "executed", By: "telegram:1001", At: at}
	res.Text = ""
	if _, err := h.gw.Act(ctx, res); err != nil {
		t.Fatal(err)
	}
	edited, _ = h.fake.Message(group.ID, req.MessageID)
	if !strings.Contains(edited.Plain, "Approved and run") || strings.Count(edited.Plain, "by telegram:1001") != 1 {
		t.Fatalf("second edit %q", edited.Plain)
	}
}

func TestTypingUntilStopped(t *testing.T) {
	h := newHarness(t)
	stop := h.gw.StartTyping(context.Background(), convOf(alice.ID))
	testutil.WaitFor(t, "two typing actions", func() bool { return len(h.fake.Actions()) >= 2 })
	stop()
	stop()
	n := len(h.fake.Actions())
	time.Sleep(60 * time.Millisecond) // three renewal periods
	if len(h.fake.Actions()) != n {
		t.Fatal("typing went on after stop")
	}
	for _, a := range h.fake.Actions() {
		if a.ChatID != alice.ID || a.Action != "typing" {
			t.Fatalf("action %+v", a)
		}
	}
}

// TestResolvedRequestDropsTheReplyHint: once resolved, the edited request
// no longer tells people to reply /approve; the rest of it stays.
func TestResolvedRequestDropsTheReplyHint(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	req := reply(convOf(group.ID), "Approval needed: shell\n`sh run.sh`\nAsked in telegram:1 by telegram:1.\nExpires in 15m (14:18 UTC).\n"+
		"Reply /approve K7Q2MX9P or /deny K7Q2MX9P [reason]; /approve K7Q2MX9P always also allows exactly this call.\n"+
		"(Shortened: /show K7Q2MX9P prints the full action.)")
	req.Approval = &core.ApprovalPrompt{Token: "K7Q2MX9P", Tool: "shell", Summary: "sh run.sh", Expires: time.Now().Add(15 * time.Minute)}
	if _, err := h.gw.Act(ctx, req); err != nil {
		t.Fatal(err)
	}
	sent := h.fake.Sent()[0]
	if !strings.Contains(sent.Plain, "Reply /approve K7Q2MX9P") {
		t.Fatalf("request %q lacks the reply hint", sent.Plain)
	}
	res := reply(convOf(group.ID), "")
	res.Resolution = &core.ApprovalResolution{Token: "K7Q2MX9P", Status: "executed", By: "telegram:1001", At: time.Now()}
	if _, err := h.gw.Act(ctx, res); err != nil {
		t.Fatal(err)
	}
	edited, _ := h.fake.Message(group.ID, sent.MessageID)
	if strings.Contains(edited.Plain, "Reply /approve") || strings.Contains(edited.Plain, "/deny") {
		t.Errorf("resolved request still says how to reply:\n%s", edited.Plain)
	}
	for _, want := range []string{"sh run.sh", "Expires in 15m", "(Shortened: /show K7Q2MX9P", "Approved and run by telegram:1001"} {
		if !strings.Contains(edited.Plain, want) {
			t.Errorf("resolved request lacks %q:\n%s", want, edited.Plain)
		}
	}
}
