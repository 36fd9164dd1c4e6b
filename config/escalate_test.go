package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestHITLEscalate: hitl.remind_after and hitl.escalate decode, and every
// error names its key: a nudge at or after hitl.ttl, steps out of order,
// a step that asks nobody, an identity or conversation that is not one.
func TestHITLEscalate(t *testing.T) {
	c := mustParse(t, "hitl:\n  ttl: 30m\n  approvers: [console:local]\n  remind_after: 10m\n"+
		"  escalate:\n    - {after: 20m, approvers: [telegram:777, slack:U0ONCALL], notify: [slack:C0OPS]}\n", noEnv)
	if c.HITL.RemindAfter.D() != 10*time.Minute || len(c.HITL.Escalate) != 1 {
		t.Fatalf("hitl = %+v; want remind_after 10m and one escalation step", c.HITL)
	}
	if e := c.HITL.Escalate[0]; e.After.D() != 20*time.Minute || strings.Join(e.Approvers, ",") != "telegram:777,slack:U0ONCALL" || strings.Join(e.Notify, ",") != "slack:C0OPS" {
		t.Errorf("hitl.escalate[0] = %+v", e)
	}
	if c := mustParse(t, "hitl: {approvers: [console:local]}\n", noEnv); c.HITL.RemindAfter != 0 || len(c.HITL.Escalate) != 0 {
		t.Errorf("by default remind_after %s, escalate %v; want 0 and none", c.HITL.RemindAfter, c.HITL.Escalate)
	}
	tests := []struct {
		name, hitl, key, msg string
	}{
		{"remind at the expiry", "remind_after: 30m", "hitl.remind_after", "less than hitl.ttl"},
		{"remind negative", "remind_after: -1s", "hitl.remind_after", "less than hitl.ttl"},
		{"step after the expiry", "escalate: [{after: 40m, approvers: [telegram:777]}]", "hitl.escalate[0].after", "less than hitl.ttl"},
		{"step without a delay", "escalate: [{approvers: [telegram:777]}]", "hitl.escalate[0].after", "must be positive"},
		{"steps out of order", "escalate: [{after: 20m, approvers: [telegram:777]}, {after: 10m, approvers: [telegram:8]}]", "hitl.escalate[1].after", "later than hitl.escalate[0].after"},
		{"a step asks nobody", "escalate: [{after: 20m}]", "hitl.escalate[0]", "asks nobody"},
		{"not an identity", "escalate: [{after: 20m, approvers: [telegram:777, nocolon]}]", "hitl.escalate[0].approvers[1]", "want an identity gateway:id"},
		{"unknown gateway", "escalate: [{after: 20m, approvers: [irc:bob]}]", "hitl.escalate[0].approvers[0]", `unknown gateway "irc"`},
		{"a schedule", "escalate: [{after: 20m, approvers: [schedule:nightly]}]", "hitl.escalate[0].approvers[0]", "a schedule is never an approver"},
		{"not a conversation", "escalate: [{after: 20m, notify: [slack]}]", "hitl.escalate[0].notify[0]", "want a conversation"},
		{"unknown key", "escalate: [{after: 20m, approvers: [telegram:1], who: x}]", "hitl.escalate[0].who", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte("hitl:\n  ttl: 30m\n  approvers: [console:local]\n  "+tt.hitl+"\n"), noEnv, specs())
			e, ok := errors.AsType[*Error](err)
			if !ok {
				t.Fatalf("Parse: %v; want *Error", err)
			}
			if e.Key != tt.key || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("got Key=%q Msg=%q\nwant Key=%q Msg~%q", e.Key, e.Msg, tt.key, tt.msg)
			}
		})
	}
}
