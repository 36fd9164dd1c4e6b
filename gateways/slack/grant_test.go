package slack

import (
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestApproveGrantButton: a request that offers a grant has an "Approve
// 30 min" button, before "Approve always"; its press reaches the broker as
// core.DecisionApproveGrant from the presser.
func TestApproveGrantButton(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}).start()
	conv := core.Conversation{Gateway: Name, Chat: "C1"}
	p := core.ApprovalPrompt{Token: "K7Q2MX9P", Tool: "shell", Hint: requestHint, AllowAlways: true, AllowGrant: true, Expires: time.Now().Add(time.Hour)}
	if err := h.gw.PromptApproval(t.Context(), conv, requestText, p); err != nil {
		t.Fatal(err)
	}
	req := h.fake.Posts("C1")[0]
	bs := req.Buttons()
	if len(bs) != 4 || bs[2].ActionID != actionApproveGrant || bs[2].Value != p.Token || bs[3].ActionID != actionApproveAlways {
		t.Fatalf("buttons %+v; want Approve, Deny, Approve 30 min, Approve always", bs)
	}
	h.fake.InjectBlockAction(fakeslack.BlockAction{User: "U1", Channel: "C1", MessageTS: req.TS, ActionID: actionApproveGrant, Value: p.Token})
	testutil.WaitFor(t, "the press", func() bool { return len(h.appr.Calls()) == 1 })
	if c := h.appr.Calls()[0]; c.From != "slack:U1" || c.Token != p.Token || c.Decision != core.DecisionApproveGrant {
		t.Fatalf("press %+v; want the 30 min grant from slack:U1", c)
	}
	waitAcked(t, h.fake)
}
