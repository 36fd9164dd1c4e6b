package slack

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

const (
	requestText = "Approval needed: shell `echo <hi> && rm x`"
	requestHint = "Reply /approve K7Q2MX9P or /deny K7Q2MX9P [reason]"
)

func TestApprovalButtonsPressAndUpdate(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}).start()
	conv := core.Conversation{Gateway: Name, Chat: "C1", Thread: "1700000000.000100"}
	p := core.ApprovalPrompt{Token: "K7Q2MX9P", Tool: "shell", Hint: requestHint, AllowAlways: true, Expires: time.Now().Add(time.Hour)}
	if err := h.gw.PromptApproval(t.Context(), conv, requestText, p); err != nil {
		t.Fatal(err)
	}
	posts := h.fake.Posts("C1")
	if len(posts) != 1 || posts[0].ThreadTS != conv.Thread {
		t.Fatalf("posts %+v", posts)
	}
	req := posts[0]
	bs := req.Buttons()
	if len(bs) != 3 || bs[0].ActionID != actionApprove || bs[1].ActionID != actionDeny || bs[2].ActionID != actionApproveAlways {
		t.Fatalf("buttons %+v", bs)
	}
	for _, b := range bs {
		if b.Value != p.Token {
			t.Fatalf("button %+v does not carry the token", b)
		}
	}
	if b := blockText(req.Blocks); !strings.Contains(b, "echo &lt;hi&gt; &amp;&amp; rm x") || !strings.Contains(b, requestHint) {
		t.Fatalf("request text not escaped: %s", req.Blocks)
	}

	// An approver presses Approve: the broker gets the presser's identity.
	h.fake.InjectBlockAction(fakeslack.BlockAction{User: "U1", Channel: "C1", MessageTS: req.TS, ThreadTS: conv.Thread, ActionID: actionApprove, Value: p.Token})
	testutil.WaitFor(t, "the press", func() bool { return len(h.appr.Calls()) == 1 })
	if c := h.appr.Calls()[0]; c.From != "slack:U1" || c.Conv != conv || c.Token != p.Token || c.Decision != core.DecisionApprove {
		t.Fatalf("press %+v", c)
	}
	testutil.WaitFor(t, "the outcome shown to the presser", func() bool { return len(h.fake.Ephemerals()) == 1 })
	if e := h.fake.Ephemerals()[0]; e.User != "U1" || e.Channel != "C1" || e.ThreadTS != conv.Thread || !strings.Contains(e.Text, "Approved") {
		t.Fatalf("ephemeral %+v", e)
	}

	// A non-approver is told so, visible to them only.
	h.appr.SetReply("not authorised")
	h.fake.InjectBlockAction(fakeslack.BlockAction{User: "U2", Channel: "C1", MessageTS: req.TS, ThreadTS: conv.Thread, ActionID: actionDeny, Value: p.Token})
	testutil.WaitFor(t, "the refusal", func() bool { return len(h.fake.Ephemerals()) == 2 })
	if e := h.fake.Ephemerals()[1]; e.User != "U2" || !strings.Contains(e.Text, "Not authorised") || !strings.Contains(e.Text, "slack:U2") {
		t.Fatalf("ephemeral %+v", e)
	}

	// The resolution updates the request once: outcome in, hint and buttons out.
	r := core.ApprovalResolution{Token: p.Token, Status: "approved", By: "slack:U1", At: time.Date(2026, 5, 1, 14, 3, 0, 0, time.UTC)}
	h.gw.UpdateApproval(t.Context(), r)
	h.gw.UpdateApproval(t.Context(), r)
	m, ok := h.fake.Message("C1", req.TS)
	if !ok || m.Edits != 1 || len(m.Buttons()) != 0 {
		t.Fatalf("request after the resolution: %+v (ok %v)", m, ok)
	}
	if b := blockText(m.Blocks); !strings.Contains(b, "Approved by slack:U1 at 2026-05-01 14:03 UTC") || strings.Contains(b, "Reply /approve") || !strings.Contains(b, "rm x") {
		t.Fatalf("updated blocks %s", b)
	}
	if ups := h.fake.Updates(); len(ups) != 1 || ups[0].Parse != "none" {
		t.Fatalf("updates %+v; want one, with parse=none (chat.update's default turns a written @channel into a mention)", ups)
	}
	waitAcked(t, h.fake)
}

func TestLongApprovalRequestNotTruncated(t *testing.T) {
	h := newHarness(t, fakeslack.Options{})
	conv := core.Conversation{Gateway: Name, Chat: "C1", Thread: "1700000000.000100"}
	text := longText(9000) // three sections
	if err := h.gw.PromptApproval(t.Context(), conv, text, core.ApprovalPrompt{Token: "AB12CD34", Tool: "shell"}); err != nil {
		t.Fatalf("PromptApproval: %v", err)
	}
	p := h.fake.Posts("C1")
	if len(p) != 1 || len(p[0].Buttons()) != 2 || !strings.Contains(blockText(p[0].Blocks), "line 00150") {
		t.Fatalf("posts %d", len(p))
	}
}

// blockText joins the texts of section and context blocks, as sent.
func blockText(raw json.RawMessage) string {
	var blocks []struct {
		Text     *struct{ Text string } `json:"text"`
		Elements []struct{ Text any }   `json:"elements"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Text != nil {
			b.WriteString(bl.Text.Text + "\n")
		}
		for _, e := range bl.Elements {
			if s, ok := e.Text.(string); ok {
				b.WriteString(s + "\n")
			}
		}
	}
	return b.String()
}

// TestRequestPostedAfterItsResolutionShowsIt: a request whose post was
// held up (a rate-limit pause) while an approver resolved it elsewhere is
// updated to the outcome as soon as it is posted: it never keeps live
// buttons.
func TestRequestPostedAfterItsResolutionShowsIt(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}).start()
	conv := core.Conversation{Gateway: Name, Chat: "C1", Thread: "1700000000.000100"}
	p := core.ApprovalPrompt{Token: "K7Q2MX9P", Tool: "shell", Hint: requestHint, Expires: time.Now().Add(time.Hour)}
	h.gw.UpdateApproval(t.Context(), core.ApprovalResolution{Token: p.Token, Status: "denied", By: "telegram:1001", At: time.Now()})
	if err := h.gw.PromptApproval(t.Context(), conv, requestText, p); err != nil {
		t.Fatal(err)
	}
	posts := h.fake.Posts("C1")
	if len(posts) != 1 {
		t.Fatalf("posts %+v", posts)
	}
	m, _ := h.fake.Message("C1", posts[0].TS)
	if len(m.Buttons()) != 0 || !strings.Contains(blockText(m.Blocks), "Denied by telegram:1001") {
		t.Fatalf("the request after a resolution announced before it: buttons %+v, blocks %s", m.Buttons(), m.Blocks)
	}
}
