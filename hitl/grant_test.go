package hitl_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// granted asks the broker, as the policy gate does, whether a call of
// from in conv is covered by a grant.
func (h *harness) granted(conv core.Conversation, from core.Identity, call llm.ToolCall) (string, bool) {
	return h.b.Granted(context.Background(), core.Action{Kind: core.ActionTool, Conv: conv, From: from, Call: call})
}

// auditOf returns the audit entries with the outcome.
func (h *harness) auditOf(t *testing.T, outcome string) []record.AuditEntry {
	t.Helper()
	es, err := h.store.QueryAudit(context.Background(), record.AuditFilter{Outcome: outcome})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestGrantCoversIdenticalCallsUntilItExpires is issue 30 §3 at the
// broker with a fake clock: "/approve TOKEN for 2m" runs the call and
// covers the identical call in that conversation, not one argument
// changed nor another conversation, until two minutes have passed; the
// grant is audited when given and when it expired (once).
func TestGrantCoversIdenticalCallsUntilItExpires(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.hold(t, lsCall)
	if !h.say(boss, convB, "/approve "+tok+" for 2m") {
		t.Fatal("/approve … for 2m not handled")
	}
	h.idle(t) // the acknowledgement may come before or after the run's outcome
	if ack := []string{"Approved: running", "Grant #1 given", "in alpha:A1", "until 12:02 UTC", "/unallow 1"}; !h.repliedAll(convB, ack...) {
		t.Errorf("acknowledgement: no reply in %s says all of %q", convB, ack)
	}
	if n := h.d.runs.Load(); n != 1 {
		t.Fatalf("%d runs, want the approved one", n)
	}
	rule, ok := h.granted(convA, asker, lsCall)
	if !ok || !strings.Contains(rule, "grant #1 by beta:boss until 2026-05-06 12:02:00 UTC") {
		t.Fatalf("identical call: Granted = %q, %v; want grant #1", rule, ok)
	}
	changed := lsCall
	changed.Args = `{"command":"ls -la /srv/x"}`
	if _, ok := h.granted(convA, asker, changed); ok {
		t.Error("a call with its argument changed is covered by the grant")
	}
	if _, ok := h.granted(convB, asker, lsCall); ok {
		t.Error("the identical call in another conversation is covered by the grant")
	}
	if h.b.StandingAllowed(context.Background(), lsCall.Name, lsCall.Args) {
		t.Error("a grant became a standing allow (it applies everywhere, for ever)")
	}
	h.clock.Advance(2*time.Minute - time.Second)
	if _, ok := h.granted(convA, asker, lsCall); !ok {
		t.Error("not covered one second before the grant expires")
	}
	if n := h.b.ExpireGrants(context.Background()); n != 0 {
		t.Errorf("ExpireGrants before the expiry = %d", n)
	}
	h.clock.Advance(time.Second)
	if _, ok := h.granted(convA, asker, lsCall); ok {
		t.Error("still covered once the two minutes have passed (before any sweep)")
	}
	if n := h.b.ExpireGrants(context.Background()); n != 1 {
		t.Errorf("ExpireGrants = %d, want 1", n)
	}
	if n := h.b.ExpireGrants(context.Background()); n != 0 {
		t.Errorf("ExpireGrants again = %d, want 0", n)
	}
	outcomes := h.audit(t)
	i, j := slices.Index(outcomes, "approved"), slices.Index(outcomes, "granted")
	if i < 0 || j != i+1 {
		t.Errorf("audit %q: want \"granted\" right after \"approved\"", outcomes)
	}
	g := h.auditOf(t, "granted")
	if len(g) != 1 || g[0].ApprovedBy != boss || g[0].RequestedBy != asker || g[0].Conv != "alpha:A1" || !strings.Contains(g[0].Detail, "grant #1 for 2m") {
		t.Errorf("granted audit = %+v", g)
	}
	x := h.auditOf(t, "grant-expired")
	if len(x) != 1 || x[0].ApprovedBy != boss || x[0].Tool != "shell" || x[0].Args != lsCall.Args || !strings.Contains(x[0].Detail, "grant #1") {
		t.Errorf("grant expired audit = %+v", x)
	}
}

// TestGrantRulesAndUnallow: /rules lists a grant, numbered with the
// standing allows, with its conversation, granter and expiry; /unallow N
// ends it (audited) and the call is held again.
func TestGrantRulesAndUnallow(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.hold(t, lsCall)
	h.say(boss, convB, "/approve "+tok+" always")
	h.idle(t)
	other := llm.ToolCall{ID: "call_2", Name: "shell", Args: `{"command":"df -h"}`}
	tok = h.hold(t, other)
	h.say(admin, convB, "/approve "+tok+" for 90m")
	h.idle(t)
	h.clock.Advance(30 * time.Minute)
	h.say(admin, convA, "/rules")
	mustContain(t, "/rules", h.lastReply(t, convA).Text,
		"#1 shell", "Grants (", "#2 shell `{\"command\":\"df -h\"}` in alpha:A1 — granted by alpha:admin, until 2026-05-06 13:30 UTC (1h left)")
	h.say(boss, convB, "/unallow 2")
	mustContain(t, "/unallow", h.lastReply(t, convB).Text, "Removed grant #2", "now needs approval again")
	if _, ok := h.granted(convA, asker, other); ok {
		t.Error("still covered after /unallow")
	}
	h.say(boss, convB, "/unallow 2")
	mustContain(t, "/unallow again", h.lastReply(t, convB).Text, "There is no standing allow #2 and no grant #2")
	h.say(admin, convA, "/rules")
	if got := h.lastReply(t, convA).Text; strings.Contains(got, "Grants") || !strings.Contains(got, "#1 shell") {
		t.Errorf("/rules after /unallow 2:\n%s", got)
	}
	es := h.auditOf(t, "unallowed")
	if len(es) != 1 || es[0].ApprovedBy != boss || !strings.Contains(es[0].Detail, "grant #2") {
		t.Errorf("unallow audit = %+v", es)
	}
	// Numbers are one sequence: the next allow or grant is #3.
	tok = h.hold(t, llm.ToolCall{ID: "call_3", Name: "shell", Args: `{"command":"uptime"}`})
	h.say(boss, convB, "/approve "+tok+" always")
	h.idle(t) // the acknowledgement may come before or after the run's outcome
	if !h.replied(convB, "Standing allow #3 added") {
		t.Errorf("third: no reply in %s says %q", convB, "Standing allow #3 added")
	}
}

// TestGrantFourEyes: with self-approval off, a grant never covers the
// later calls of the person who gave it (any of their identities), only
// other people's; with it on, it does.
func TestGrantFourEyes(t *testing.T) {
	bossElsewhere := core.Identity("alpha:boss")
	for _, self := range []bool{false, true} {
		h := newHarness(t, func(o *hitl.Options) {
			o.AllowSelfApproval = self
			o.People = [][]core.Identity{{boss, bossElsewhere}}
		})
		tok := h.hold(t, lsCall)
		h.say(boss, convB, "/approve "+tok+" for 30m")
		h.idle(t)
		if _, ok := h.granted(convA, asker, lsCall); !ok {
			t.Errorf("self=%v: the requester's identical call is not covered", self)
		}
		for _, id := range []core.Identity{boss, bossElsewhere} {
			if _, ok := h.granted(convA, id, lsCall); ok != self {
				t.Errorf("self=%v: the granter's own call as %s covered = %v", self, id, ok)
			}
		}
	}
}

// TestGrantDurationOutOfRangeRefused: a grant shorter than 1m or longer
// than 24h is refused with the range, and the request stays pending.
func TestGrantDurationOutOfRangeRefused(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.hold(t, lsCall)
	for _, d := range []string{"30s", "25h", "0m", "-5m", "1d", "soon", ""} {
		h.say(boss, convB, strings.TrimSpace("/approve "+tok+" for "+d))
		mustContain(t, "for "+d, h.lastReply(t, convB).Text, "from 1m to 24h")
	}
	if s := h.status(t, tok); s != record.StatusPending {
		t.Fatalf("status %s after refused durations, want pending", s)
	}
	if n := h.d.runs.Load(); n != 0 {
		t.Fatalf("%d runs after refused durations", n)
	}
	h.say(boss, convB, "/approve "+tok+" for 24h")
	h.idle(t) // the acknowledgement may come before or after the run's outcome
	if !h.repliedAll(convB, "Grant #1 given", "(24h)") {
		t.Errorf("for 24h: no reply in %s says %q with %q", convB, "Grant #1 given", "(24h)")
	}
}

// TestGrantBindsTheFilesItNames: like a standing allow, a grant covers
// "sh run.sh" only while run.sh is as it was when the grant was given.
func TestGrantBindsTheFilesItNames(t *testing.T) {
	ws := t.TempDir()
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(ws, "run.sh"), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("echo ok\n")
	h := newHarness(t, func(o *hitl.Options) { o.Workspace = ws })
	call := llm.ToolCall{ID: "c", Name: "shell", Args: `{"command":"sh run.sh"}`}
	tok := h.hold(t, call)
	h.say(boss, convB, "/approve "+tok+" for 10m")
	h.idle(t)
	if _, ok := h.granted(convA, asker, call); !ok {
		t.Fatal("unchanged run.sh: not covered")
	}
	write("echo pwned\n")
	if _, ok := h.granted(convA, asker, call); ok {
		t.Error("rewritten run.sh: still covered by the grant")
	}
}

// TestPressApproveGrant: the "Approve 30 min" button grants for 30 min;
// every request offers it.
func TestPressApproveGrant(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.hold(t, lsCall)
	if p := h.lastReply(t, convA).Approval; p == nil || !p.AllowGrant || !p.AllowAlways {
		t.Fatalf("request prompt %+v: want the always and the 30 min buttons", p)
	}
	if got := h.b.Press(context.Background(), boss, convDM, tok, core.DecisionApproveGrant, nil); got != "approved — running…" {
		t.Errorf("toast = %q", got)
	}
	h.idle(t)
	mustContain(t, "outcome notice", h.lastReply(t, convA).Text, "Grant #1 given", "(30m)")
	h.clock.Advance(core.ButtonGrant - time.Second)
	if _, ok := h.granted(convA, asker, lsCall); !ok {
		t.Error("not covered within the 30 min")
	}
	h.clock.Advance(time.Second)
	if _, ok := h.granted(convA, asker, lsCall); ok {
		t.Error("covered after the 30 min")
	}
}

// TestGrantFromProfileApproverRefused: an approver a conversation's
// profile adds approves the call once; a grant is for hitl.approvers.
func TestGrantFromProfileApproverRefused(t *testing.T) {
	lead := core.Identity("alpha:lead")
	profiles := core.NewProfiles([]core.Profile{{Name: "ops", Match: []string{"alpha:A*"}, Approvers: []core.Identity{lead}}})
	h := newHarness(t, func(o *hitl.Options) { o.Profiles = profiles })
	tok := h.hold(t, lsCall)
	h.say(lead, convA, "/approve "+tok+" for 30m")
	h.idle(t)
	if n := h.d.runs.Load(); n != 1 {
		t.Fatalf("%d runs, want 1", n)
	}
	if _, ok := h.granted(convA, asker, lsCall); ok {
		t.Error("a profile approver's grant covers the next call")
	}
	if len(h.auditOf(t, "granted")) != 0 {
		t.Error("a grant audited though none was given")
	}
}

// TestEscalationApproverGrants: an approver a request was escalated to
// may approve it for a time (issue 30 §2), and the grant covers the
// identical call of that conversation though they are in no approver list.
func TestEscalationApproverGrants(t *testing.T) {
	h := newNudgeHarness(t, nil)
	tok := h.hold(t, lsCall)
	h.clock.Advance(12 * time.Minute)
	h.nudge(t)
	dm := dmOf(oncall)
	testutil.WaitFor(t, "the escalated request", func() bool { return h.requests(dm, tok, "Escalated") == 1 })
	if !h.guest(oncall, dm, "/approve "+tok+" for 30m") {
		t.Fatal("/approve … for 30m of the escalated request not answered")
	}
	// The acknowledgement, not the last reply: the approved call's outcome
	// may already follow it in the same direct message.
	if !h.replied(dm, "Grant #1 given") {
		t.Errorf("no acknowledgement %q in %s: %+v", "Grant #1 given", dm, h.d.gateways[dm.Gateway].in(dm))
	}
	h.idle(t)
	if rule, ok := h.granted(convA, asker, lsCall); !ok || !strings.Contains(rule, "by beta:oncall") {
		t.Errorf("Granted = %q, %v; want the escalation approver's grant", rule, ok)
	}
}
