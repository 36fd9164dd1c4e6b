package telegram

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// approvalRequest is a request the broker could send: its text and prompt.
type approvalRequest struct {
	conv core.Conversation
	text string
	p    core.ApprovalPrompt
}

func newApprovalRequest(conv core.Conversation, token string, always bool) approvalRequest {
	return approvalRequest{conv: conv, text: "Approval needed: run `rm -rf build/` (shell). Token " + token,
		p: core.ApprovalPrompt{Token: token, Tool: "shell", Summary: "rm -rf build/", Hint: "Reply /approve " + token + " or /deny " + token + " [reason].",
			AllowAlways: always, Expires: time.Now().Add(15 * time.Minute)}}
}

// send sends r through the gateway's PromptApproval.
func (r approvalRequest) send(t *testing.T, h *harness) {
	t.Helper()
	if err := h.gw.PromptApproval(context.Background(), r.conv, r.text, r.p); err != nil {
		t.Fatal(err)
	}
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
		newApprovalRequest(convOf(group.ID), "K7Q2", tc.always).send(t, h)
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
	a := newApprovalRequest(convOf(alice.ID), "K7Q2", false)
	a.text = longReply(6000)
	a.send(t, h)
	sent := h.fake.Sent()
	for i, s := range sent {
		if (s.Markup != nil) != (i == len(sent)-1) {
			t.Fatalf("chunk %d of %d: markup %+v", i, len(sent), s.Markup)
		}
	}
}

func TestButtonPressCallsPressAsThePresser(t *testing.T) {
	h := newHarness(t).start()
	newApprovalRequest(convOf(group.ID), "K7Q2", true).send(t, h)
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
		testutil.WaitFor(t, "the press", func() bool { return len(h.appr.Calls()) > 0 })
		got := h.appr.Calls()[len(h.appr.Calls())-1]
		want := gatewaytest.Press{From: "telegram:1002", Conv: convOf(group.ID), Token: "K7Q2", Decision: tc.d}
		if got != want {
			t.Fatalf("Press %+v, want %+v", got, want)
		}
		h.appr.Forget()
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
	h.appr.SetReply(long)
	h.fake.InjectCallback(faketg.Callback{From: alice, ChatID: alice.ID, MessageID: 1, Data: "zz"})
	h.fake.InjectCallback(faketg.Callback{From: alice, ChatID: alice.ID, MessageID: 1, Data: "d:T1"})
	testutil.WaitFor(t, "two answers", func() bool { return len(h.fake.Answers()) == 2 })
	calls := h.appr.Calls()
	if len(calls) != 1 || calls[0].Token != "T1" || calls[0].From != "telegram:1001" {
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
	newApprovalRequest(convOf(group.ID), "K7Q2", false).send(t, h)
	req := h.fake.Sent()[0]
	at := time.Date(2026, 5, 1, 14, 3, 0, 0, time.UTC)
	// The broker tells the gateway of the resolution, then sends the notice.
	h.gw.UpdateApproval(ctx, core.ApprovalResolution{Token: "K7Q2", Status: "approved", By: "telegram:1001", At: at})
	if _, err := h.gw.Act(ctx, reply(convOf(group.ID), "Approved by telegram:1001; running it now.")); err != nil {
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
	h.gw.UpdateApproval(ctx, core.ApprovalResolution{Token: "K7Q2", Status: "approved", By: "telegram:1001", At: at})
	if n := h.fake.Calls("editMessageText"); n != 1 {
		t.Fatalf("%d edits for one resolution", n)
	}
	// A later status (executed) edits the request again.
	h.gw.UpdateApproval(ctx, core.ApprovalResolution{Token: "K7Q2", Status: "executed", By: "telegram:1001", At: at})
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
	req := approvalRequest{conv: convOf(group.ID),
		text: "Approval needed: shell\n`sh run.sh`\nAsked in telegram:1 by telegram:1.\nExpires in 15m (14:18 UTC).\n" +
			"(Shortened: /show K7Q2MX9P prints the full action.)",
		p: core.ApprovalPrompt{Token: "K7Q2MX9P", Tool: "shell", Summary: "sh run.sh", Expires: time.Now().Add(15 * time.Minute),
			Hint: "Reply /approve K7Q2MX9P or /deny K7Q2MX9P [reason]; /approve K7Q2MX9P always also allows exactly this call."}}
	req.send(t, h)
	sent := h.fake.Sent()[0]
	if !strings.Contains(sent.Plain, "Reply /approve K7Q2MX9P") {
		t.Fatalf("request %q lacks the reply hint", sent.Plain)
	}
	h.gw.UpdateApproval(ctx, core.ApprovalResolution{Token: "K7Q2MX9P", Status: "executed", By: "telegram:1001", At: time.Now()})
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

// TestResolvedLongRequestLosesOnlyItsButtons: a request sent as several
// messages cannot show the outcome in its last one without repeating or
// cutting text: resolved, that message keeps its text and loses its
// buttons.
func TestResolvedLongRequestLosesOnlyItsButtons(t *testing.T) {
	h := newHarness(t)
	a := newApprovalRequest(convOf(alice.ID), "K7Q2", false)
	a.text = longReply(6000)
	a.send(t, h)
	sent := h.fake.Sent()
	last := sent[len(sent)-1]
	if len(sent) < 2 || last.Markup == nil {
		t.Fatalf("sent %d messages, last markup %+v", len(sent), last.Markup)
	}
	h.gw.UpdateApproval(context.Background(), core.ApprovalResolution{Token: "K7Q2", Status: "denied", By: "telegram:1001", At: time.Now()})
	edited, _ := h.fake.Message(alice.ID, last.MessageID)
	if edited.Markup != nil || edited.Plain != last.Plain {
		t.Fatalf("resolved last message: markup %+v, text changed %v", edited.Markup, edited.Plain != last.Plain)
	}
	if n := h.fake.Calls("editMessageText"); n != 0 {
		t.Fatalf("%d text edits of a long request", n)
	}
}

// TestRateLimitedButtonAnswerWaitsAndRetries: a 429 with retry_after on
// answerCallbackQuery delays the toast until the pause is over; it is not
// lost (the button's spinner would turn until Telegram gives up on it).
func TestRateLimitedButtonAnswerWaitsAndRetries(t *testing.T) {
	h := newHarnessOn(t, faketg.New(faketg.Options{Token: testToken, MaxPollWait: 200 * time.Millisecond,
		RetryAfter: 5, RetryAfterUnit: 10 * time.Millisecond})).start()
	h.fake.FailNext("answerCallbackQuery", 1, faketg.FaultTooMany)
	h.fake.InjectCallback(faketg.Callback{From: alice, ChatID: alice.ID, MessageID: 1, Data: "a:T1"})
	testutil.WaitFor(t, "the press answered after the 429", func() bool { return len(h.fake.Answers()) == 1 })
	if a := h.fake.Answers()[0]; a.Text != "Approved." {
		t.Fatalf("answer %+v", a)
	}
	if n := h.fake.EarlyCalls("answerCallbackQuery"); n != 0 {
		t.Fatalf("%d answers during the 429 pause; want none", n)
	}
}

// TestTypingHonoursRetryAfter: after a 429 with retry_after on
// sendChatAction, the indicator is not renewed before the pause is over,
// and resumes after it.
func TestTypingHonoursRetryAfter(t *testing.T) {
	// retry_after 10 units of 10 ms: five renewal periods of FastConfig.
	h := newHarnessOn(t, faketg.New(faketg.Options{Token: testToken, MaxPollWait: 200 * time.Millisecond,
		RetryAfter: 10, RetryAfterUnit: 10 * time.Millisecond}))
	h.fake.FailNext("sendChatAction", 1, faketg.FaultTooMany)
	stop := h.gw.StartTyping(context.Background(), convOf(alice.ID))
	defer stop()
	testutil.WaitFor(t, "typing shown again after the pause", func() bool { return len(h.fake.Actions()) >= 2 })
	stop()
	if n := h.fake.EarlyCalls("sendChatAction"); n != 0 {
		t.Fatalf("%d typing renewals during the 429 pause; want none", n)
	}
}

// TestRequestSentAfterItsResolutionShowsIt: a request whose send was held
// up (a rate-limit pause) while an approver resolved it elsewhere is
// edited to the outcome as soon as it is sent: it never keeps live buttons.
func TestRequestSentAfterItsResolutionShowsIt(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.gw.UpdateApproval(ctx, core.ApprovalResolution{Token: "K7Q2MX9P", Status: "denied", By: "slack:U1", At: time.Now()})
	req := approvalRequest{conv: convOf(group.ID), text: "Approval needed: shell\n`sh run.sh`",
		p: core.ApprovalPrompt{Token: "K7Q2MX9P", Tool: "shell", Summary: "sh run.sh", Expires: time.Now().Add(15 * time.Minute)}}
	req.send(t, h)
	sent := h.fake.Sent()[0]
	edited, _ := h.fake.Message(group.ID, sent.MessageID)
	if edited.Markup != nil && len(edited.Markup.Buttons()) > 0 {
		t.Errorf("the request keeps its buttons after its resolution: %+v", edited.Markup.Buttons())
	}
	if !strings.Contains(edited.Plain, "Denied by slack:U1") {
		t.Errorf("the request does not show its outcome:\n%s", edited.Plain)
	}
}
