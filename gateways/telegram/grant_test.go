package telegram

import (
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestApproveGrantButton: a request that offers a grant has Approve and
// Deny on the first row, "Approve 30 min" and "Approve always" on the
// second; a press of the 30 min button reaches the broker as
// core.DecisionApproveGrant from the presser.
func TestApproveGrantButton(t *testing.T) {
	h := newHarness(t).start()
	r := newApprovalRequest(convOf(group.ID), "K7Q2", true)
	r.p.AllowGrant = true
	r.send(t, h)
	req := h.fake.Sent()[0]
	var rows []string
	for _, row := range req.Markup.InlineKeyboard {
		var data []string
		for _, b := range row {
			data = append(data, b.Text+"="+b.CallbackData)
		}
		rows = append(rows, strings.Join(data, ","))
	}
	if got := strings.Join(rows, " | "); got != "✅ Approve=a:K7Q2,❌ Deny=d:K7Q2 | ⏱ Approve 30 min=g:K7Q2,♾ Approve always=A:K7Q2" {
		t.Fatalf("keyboard %s", got)
	}
	h.fake.InjectCallback(faketg.Callback{From: bob, ChatID: group.ID, MessageID: req.MessageID, Data: "g:K7Q2"})
	testutil.WaitFor(t, "the press", func() bool { return len(h.appr.Calls()) == 1 })
	want := gatewaytest.Press{From: "telegram:1002", Conv: convOf(group.ID), Token: "K7Q2", Decision: core.DecisionApproveGrant}
	if got := h.appr.Calls()[0]; got != want {
		t.Fatalf("Press %+v, want %+v", got, want)
	}
}
