package core

import "testing"

// TestWebhookAdmission: a webhook's own signal (Signal.Webhook and its
// identity) passes without an allow list; the identity without the field,
// or the field with another identity, is refused; webhook:<name> is never
// an approver, even when listed.
func TestWebhookAdmission(t *testing.T) {
	a := NewAuth(nil, []Identity{"webhook:alerts", "slack:U1"})
	conv := Conversation{Gateway: "slack", Chat: "C1"}
	cases := []struct {
		s    Signal
		want bool
	}{
		{Signal{Kind: KindMessage, Conv: conv, From: WebhookIdentity("alerts"), Webhook: "alerts"}, true},
		{Signal{Kind: KindMessage, Conv: conv, From: WebhookIdentity("alerts")}, false},
		{Signal{Kind: KindMessage, Conv: conv, From: "slack:U2", Webhook: "alerts"}, false},
		{Signal{Kind: KindMessage, Conv: conv, From: WebhookIdentity("other"), Webhook: "alerts"}, false},
	}
	for i, c := range cases {
		if got := a.Allowed(c.s); got != c.want {
			t.Errorf("case %d (%s, %q): Allowed = %v; want %v", i, c.s.From, c.s.Webhook, got, c.want)
		}
	}
	if a.IsApprover("webhook:alerts") {
		t.Error("webhook:alerts is an approver")
	}
	if !a.IsApprover("slack:U1") {
		t.Error("slack:U1 is not an approver")
	}
}
