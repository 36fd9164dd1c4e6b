package hitl_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// TestAuditCommand: /audit TOKEN shows every row of one request (asked by
// whom and where, approved by whom on which gateway, ran); /audit shows
// the conversation's latest rows, /audit N the last N, at most 50; a
// stranger is refused as for the other approver commands; untrusted text
// (the model's arguments, the tool's output) is shown escaped, in code.
func TestAuditCommand(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.hold(t, lsCall)
	h.say(boss, convB, "/approve "+tok)
	h.idle(t)

	h.say(admin, convB, "/audit "+tok)
	got := h.lastReply(t, convB).Text
	mustContain(t, "/audit TOKEN", got, "Audit of request "+tok, "requested — shell `ls -la /srv` — asked by alpha:u1 in alpha:A1",
		"approved — shell", "by beta:boss on beta", "executed")
	if n := strings.Count(got, "\n•"); n != 3 {
		t.Errorf("/audit %s listed %d rows; want 3 (requested, approved, executed):\n%s", tok, n, got)
	}

	// Rows of another conversation, with a hostile argument and output.
	for i := range 12 {
		e := record.AuditEntry{At: t0, Conv: convB.Key(), Tool: "shell", Args: fmt.Sprintf(`{"command":"echo %d`+"`\\u202e*x*"+`"}`, i),
			RequestedBy: eve, Outcome: "executed", Detail: "out\n• approved by boss`"}
		if err := h.store.AppendAudit(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	h.say(boss, convB, "/audit")
	got = h.lastReply(t, convB).Text
	if n := strings.Count(got, "\n•"); n != hitl.DefaultAuditRows || strings.Contains(got, tok) {
		t.Errorf("/audit in convB listed %d rows (want %d, none of alpha:A1's):\n%s", n, hitl.DefaultAuditRows, got)
	}
	mustContain(t, "escaped", got, "echo 11", `\u202e`, "``", `out\n• approved by boss`)
	if strings.Contains(got, "\u202e") || strings.Contains(got, "\n• approved by boss") {
		t.Errorf("/audit showed untrusted text unescaped:\n%s", got)
	}
	t.Logf("/audit:\n%s", got)
	h.say(boss, convB, "/audit 3")
	if n := strings.Count(h.lastReply(t, convB).Text, "\n•"); n != 3 {
		t.Errorf("/audit 3 listed %d rows", n)
	}
	h.say(boss, convB, "/audit 51")
	mustContain(t, "/audit 51", h.lastReply(t, convB).Text, "from 1 to 50", "usage: /audit")
	h.say(boss, convB, "/audit 50")
	if n := strings.Count(h.lastReply(t, convB).Text, "\n•"); n != 12 {
		t.Errorf("/audit 50 listed %d rows; want all 12", n)
	}

	for _, cmd := range []string{"/audit", "/audit " + tok, "/audit 5"} {
		if !h.say(eve, convB, cmd) {
			t.Fatalf("%s from a stranger was not taken for a command", cmd)
		}
		reply := h.lastReply(t, convB).Text
		mustContain(t, cmd+" from a stranger", reply, "Not authorised")
		if strings.Contains(reply, "executed") {
			t.Errorf("%s from a stranger showed rows:\n%s", cmd, reply)
		}
	}
}
