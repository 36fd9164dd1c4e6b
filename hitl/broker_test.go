package hitl_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

func TestNewBrokerRefusesBadOptions(t *testing.T) {
	d := newDispatcher()
	for name, o := range map[string]hitl.Options{
		"no approvers":    {},
		"empty approvers": {Approvers: []core.Identity{}},
		"bad identity":    {Approvers: []core.Identity{"boss"}},
		"empty id":        {Approvers: []core.Identity{"telegram:"}},
		"bad notify":      {Approvers: []core.Identity{boss}, Notify: []core.Conversation{{Gateway: "telegram"}}},
		"negative ttl":    {Approvers: []core.Identity{boss}, TTL: -1},
	} {
		if _, err := hitl.NewBroker(d, o); err == nil {
			t.Errorf("%s: NewBroker succeeded, want an error", name)
		}
	}
	if _, err := hitl.NewBroker(nil, hitl.Options{Approvers: []core.Identity{boss}}); err == nil {
		t.Error("nil dispatcher: NewBroker succeeded")
	}
	b, err := hitl.NewBroker(d, hitl.Options{Approvers: []core.Identity{boss}, Notify: []core.Conversation{convDM}})
	if err != nil {
		t.Fatal(err)
	}
	if b.TTL() != hitl.DefaultTTL || len(b.Approvers()) != 1 || b.NotifyTargets()[0] != convDM || !b.IsApprover(boss) || b.IsApprover(eve) {
		t.Errorf("accessors: ttl %s approvers %v notify %v", b.TTL(), b.Approvers(), b.NotifyTargets())
	}
}

func TestRequestMessage(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.hold(t, lsCall)
	for _, c := range []core.Conversation{convA, convDM} {
		got := h.lastReply(t, c)
		p := got.Approval
		if p == nil || p.Token != tok || p.Tool != "shell" || p.Summary != "ls -la /srv" || !p.AllowAlways || !p.Expires.Equal(t0.Add(ttl)) {
			t.Errorf("%s: prompt = %+v", c, p)
		}
		mustContain(t, "request in "+c.Key(), got.Text,
			"shell", "`ls -la /srv`", "alpha:A1", "alpha:u1", "shell → approve", "15m", "12:15 UTC",
			"/approve "+tok, "/deny "+tok+" [reason]")
		if strings.Contains(got.Text, "/show") {
			t.Errorf("short request points to /show: %s", got.Text)
		}
	}
	if n := len(h.beta.in(convB)); n != 0 {
		t.Errorf("%d messages in %s, which is not a target", n, convB)
	}
	if st := h.status(t, tok); st != record.StatusPending {
		t.Errorf("status %s, want pending", st)
	}
	a, _ := h.store.Approval(context.Background(), tok)
	if a.Digest != hitl.Digest(lsCall) || a.RequestedBy != asker || a.Conv != convA || a.Call != lsCall || a.Rule != "shell → approve" {
		t.Errorf("stored approval = %+v", a)
	}
	if got := h.audit(t); len(got) != 1 || got[0] != "requested" {
		t.Errorf("audit = %v, want [requested]", got)
	}
}

func TestRequestMessageShortensLongCommands(t *testing.T) {
	h := newHarness(t, nil)
	long := "echo " + strings.Repeat("x", 2000) + " END"
	call := llm.ToolCall{Name: "shell", Args: `{"command":"` + long + `","workdir":"/srv"}`}
	tok := h.hold(t, call)
	req := h.lastReply(t, convA).Text
	mustContain(t, "request", req, "/show "+tok, "workdir: `/srv`", "…")
	if strings.Contains(req, "END") || len(req) > 1200 {
		t.Errorf("request not shortened (%d bytes)", len(req))
	}
	h.say(boss, convB, "/show "+tok)
	mustContain(t, "/show", h.lastReply(t, convB).Text, "END", `"workdir": "/srv"`, "pending")
}

func TestNotifyDuplicatesAndFailuresAreHarmless(t *testing.T) {
	gamma := core.Conversation{Gateway: "gamma", Chat: "down"}
	h := newHarness(t, func(o *hitl.Options) { o.Notify = []core.Conversation{convA, gamma, convDM, convDM} })
	h.hold(t, lsCall)
	if n := len(h.alpha.in(convA)); n != 1 {
		t.Errorf("%d requests in the asking conversation, want 1", n)
	}
	if n := len(h.beta.in(convDM)); n != 1 {
		t.Errorf("%d requests in the notify DM, want 1", n)
	}
	mustContain(t, "log", h.logs.String(), `"level":"error"`, "could not deliver", "gamma:down")
}

func TestApproveFromAnotherGateway(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.hold(t, lsCall)
	if !h.say(boss, convB, "/approve "+strings.ToLower(tok[:4]+"-"+tok[4:])) {
		t.Fatal("/approve not taken as a command")
	}
	// The acknowledgement is the first message in the approver's
	// conversation; the run may already have ended and followed it.
	mustContain(t, "acknowledgement", h.beta.in(convB)[0].Text, "Approved: running shell `ls -la /srv`", tok, "outcome follows")
	h.idle(t)
	if n := h.d.runs.Load(); n != 1 {
		t.Fatalf("tool ran %d times, want 1", n)
	}
	run := h.d.calls[0]
	if run.Conv != convA || run.From != asker || run.Call != lsCall {
		t.Errorf("ran %+v, want the held call in %s for %s", run, convA, asker)
	}
	for _, c := range []core.Conversation{convA, convB, convDM} {
		got := h.lastReply(t, c)
		r := got.Resolution
		if r == nil || r.Token != tok || r.Status != "executed" || r.By != boss {
			t.Errorf("%s: resolution = %+v", c, r)
		}
		mustContain(t, "notice in "+c.Key(), got.Text, "Approved by beta:boss", "ran", "total 0")
	}
	if n := len(h.beta.in(convB)); n != 2 {
		t.Errorf("approver got %d messages, want the acknowledgement and the outcome notice", n)
	}
	s := h.signal(t)
	if s.Kind != outcome || s.Conv != convA || s.From != asker {
		t.Errorf("signal = %+v", s)
	}
	mustContain(t, "outcome", s.Text, "[gatehouse]", "held shell call", `{"command":"ls -la /srv"}`, "approved by beta:boss", "ran", "total 0\ndrwxr-xr-x app")
	if !strings.HasPrefix(s.Text, "[gatehouse]") || strings.Contains(s.Text, tok) {
		t.Errorf("outcome text must start with [gatehouse] and not hold the token: %q", s.Text)
	}
	if st := h.status(t, tok); st != record.StatusExecuted {
		t.Errorf("status %s, want executed", st)
	}
	es, _ := h.store.QueryAudit(context.Background(), record.AuditFilter{Outcome: "executed"})
	if len(es) != 1 || es[0].Tool != "shell" || es[0].Args != lsCall.Args || es[0].RequestedBy != asker || es[0].ApprovedBy != boss || es[0].Conv != "alpha:A1" {
		t.Errorf("executed audit = %+v", es)
	}
	if got := strings.Join(h.audit(t), ","); got != "requested,approved,executed" {
		t.Errorf("audit = %s", got)
	}
	h.say(admin, convA, "/approve "+tok)
	mustContain(t, "late approve", h.lastReply(t, convA).Text, "already approved (it ran) by beta:boss")
	if n := h.d.runs.Load(); n != 1 {
		t.Errorf("tool ran %d times after a second /approve", n)
	}
	h.noSignal(t)
}

func TestFailedRun(t *testing.T) {
	h := newHarness(t, nil)
	h.d.result = core.Result{Output: "exit status 2", Failed: true}
	tok := h.hold(t, lsCall)
	if got := h.b.Press(context.Background(), boss, convB, tok, core.DecisionApprove, nil); got != "approved — running…" {
		t.Errorf("toast = %q", got)
	}
	h.idle(t)
	if st := h.status(t, tok); st != record.StatusFailed {
		t.Errorf("status %s, want failed", st)
	}
	mustContain(t, "outcome", h.signal(t).Text, "ran, but failed", "exit status 2")
	if r := h.lastReply(t, convA).Resolution; r == nil || r.Status != "failed" {
		t.Errorf("resolution = %+v", r)
	}
}

func TestNonApproverIsRefused(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.hold(t, lsCall)
	for _, text := range []string{"/approve " + tok, "/deny " + tok, "/pending", "/show " + tok, "/rules", "/unallow 1", "/approve"} {
		if !h.say(eve, convB, text) {
			t.Errorf("%q not handled as a command", text)
		}
		mustContain(t, "reply to "+text, h.lastReply(t, convB).Text, "Not authorised (your identity is beta:eve)")
	}
	if got := h.b.Press(context.Background(), eve, convB, tok, core.DecisionApprove, nil); got != "not authorised" {
		t.Errorf("press toast = %q", got)
	}
	if n := h.d.runs.Load(); n != 0 {
		t.Errorf("tool ran %d times", n)
	}
	if st := h.status(t, tok); st != record.StatusPending {
		t.Errorf("status %s, want pending", st)
	}
	mustContain(t, "log", h.logs.String(), `"level":"warn"`, "not an approver", `"from":"beta:eve"`)
	es, _ := h.store.QueryAudit(context.Background(), record.AuditFilter{Outcome: "refused"})
	if len(es) != 3 || es[0].ApprovedBy != eve {
		t.Errorf("refused audit entries = %+v, want 3 by beta:eve", es)
	}
	h.noSignal(t)
}

func TestSelfApproval(t *testing.T) {
	t.Run("off", func(t *testing.T) {
		h := newHarness(t, func(o *hitl.Options) {
			o.AllowSelfApproval = false
			o.Approvers = append(o.Approvers, asker)
		})
		tok := h.hold(t, lsCall)
		h.say(asker, convA, "/approve "+tok)
		mustContain(t, "self approve", h.lastReply(t, convA).Text, "another approver must approve it")
		if got := h.b.Press(context.Background(), asker, convA, tok, core.DecisionApproveAlways, nil); !strings.Contains(got, "cannot approve your own") {
			t.Errorf("press toast = %q", got)
		}
		if n := h.d.runs.Load(); n != 0 || h.status(t, tok) != record.StatusPending {
			t.Fatalf("self-approval ran the tool (%d) or resolved it", n)
		}
		h.say(asker, convA, "/pending")
		mustContain(t, "pending", h.lastReply(t, convA).Text, tok, "your own request")
		h.say(boss, convB, "/approve "+tok)
		h.idle(t)
		if n := h.d.runs.Load(); n != 1 {
			t.Errorf("another approver's /approve ran the tool %d times", n)
		}
		tok2 := h.hold(t, lsCall)
		h.say(asker, convA, "/deny "+tok2+" changed my mind")
		if st := h.status(t, tok2); st != record.StatusDenied {
			t.Errorf("self-deny: status %s, want denied", st)
		}
	})
	t.Run("off holds for the follow-up turn", func(t *testing.T) {
		h := newHarness(t, func(o *hitl.Options) {
			o.AllowSelfApproval = false
			o.Approvers = append(o.Approvers, asker)
		})
		tok := h.hold(t, lsCall)
		h.say(boss, convB, "/approve "+tok)
		s := h.signal(t)
		if s.From != asker {
			t.Errorf("outcome signal From = %q, want the requester %s", s.From, asker)
		}
		// The engine's follow-up turn holds the LLM's next call on behalf
		// of the outcome signal's sender, as it does for a message.
		next := llm.ToolCall{ID: "call_2", Name: "shell", Args: `{"command":"rm -rf /srv"}`}
		if _, err := h.b.Hold(context.Background(), core.Held{Conv: s.Conv, From: s.From, Call: next}); err != nil {
			t.Fatalf("Hold of the follow-up call: %v", err)
		}
		tok2 := h.lastReply(t, convA).Approval.Token
		h.say(asker, convA, "/approve "+tok2)
		mustContain(t, "self approve of the follow-up", h.lastReply(t, convA).Text, "another approver must approve it")
		if st := h.status(t, tok2); st != record.StatusPending {
			t.Errorf("follow-up call: status %s after the requester's /approve, want pending", st)
		}
	})
	t.Run("on", func(t *testing.T) {
		h := newHarness(t, func(o *hitl.Options) { o.Approvers = append(o.Approvers, asker) })
		tok := h.hold(t, lsCall)
		h.say(asker, convA, "/approve "+tok)
		h.idle(t)
		if n := h.d.runs.Load(); n != 1 {
			t.Errorf("self-approval with allow_self_approval ran %d times, want 1", n)
		}
	})
}

func TestExpiry(t *testing.T) {
	t.Run("approve after expiry", func(t *testing.T) {
		h := newHarness(t, nil)
		tok := h.hold(t, lsCall)
		h.clock.Advance(ttl)
		h.say(boss, convB, "/approve "+tok)
		mustContain(t, "reply", h.lastReply(t, convB).Text, "expired")
		if n := h.d.runs.Load(); n != 0 {
			t.Errorf("expired approval ran %d times", n)
		}
		if st := h.status(t, tok); st != record.StatusExpired {
			t.Errorf("status %s, want expired", st)
		}
		checkExpiredAnnounced(t, h, tok)
		if got := h.b.Press(context.Background(), boss, convB, tok, core.DecisionApprove, nil); got != "expired" {
			t.Errorf("press after expiry = %q", got)
		}
		if n, _ := h.b.ExpireDue(context.Background()); n != 0 {
			t.Errorf("ExpireDue expired %d again", n)
		}
		h.noSignal(t)
	})
	t.Run("sweep", func(t *testing.T) {
		h := newHarness(t, nil)
		tok := h.hold(t, lsCall)
		h.clock.Advance(ttl - 1)
		if n, err := h.b.ExpireDue(context.Background()); n != 0 || err != nil {
			t.Fatalf("ExpireDue before the TTL = %d, %v", n, err)
		}
		h.clock.Advance(1)
		if n, err := h.b.ExpireDue(context.Background()); n != 1 || err != nil {
			t.Fatalf("ExpireDue at the TTL = %d, %v", n, err)
		}
		checkExpiredAnnounced(t, h, tok)
		if n, _ := h.b.ExpireDue(context.Background()); n != 0 {
			t.Errorf("second sweep expired %d", n)
		}
		if list, _ := h.b.Pending(context.Background()); len(list) != 0 {
			t.Errorf("pending after expiry: %v", list)
		}
	})
}

func checkExpiredAnnounced(t *testing.T, h *harness, tok string) {
	t.Helper()
	for _, c := range []core.Conversation{convA, convDM} {
		got := h.lastReply(t, c)
		if got.Resolution == nil || got.Resolution.Status != "expired" {
			t.Errorf("%s: no expiry resolution: %+v", c, got)
		}
		mustContain(t, "expiry notice", got.Text, "Expired", tok)
	}
	s := h.signal(t)
	if s.Conv != convA || s.Kind != outcome || strings.Contains(s.Text, tok) {
		t.Errorf("signal = %+v", s)
	}
	mustContain(t, "outcome", s.Text, "[gatehouse]", "expired", "did not run")
	if got := strings.Join(h.audit(t), ","); got != "requested,expired" {
		t.Errorf("audit = %s", got)
	}
}

func TestUnknownAndMalformedTokens(t *testing.T) {
	h := newHarness(t, nil)
	for text, want := range map[string]string{
		"/approve ZZZZZZZZ":   "There is no request ZZZZZZZZ",
		"/deny zzzz-zzzz":     "There is no request ZZZZZZZZ",
		"/show ZZZZZZZZ":      "There is no request ZZZZZZZZ",
		"/approve":            "Missing token.\nusage: /approve <token> [always | for <duration from 1m to 24h, like 30m or 2h>]",
		"/deny":               "usage: /deny <token> [reason]",
		"/approve K7Q2":       `"K7Q2" is not a token`,
		"/show":               "usage: /show <token>",
		"/unallow":            "usage: /unallow <number>",
		"/unallow 7":          "There is no standing allow #7",
		"@bot approve please": "usage: /approve",
	} {
		if !h.say(boss, convB, text) {
			t.Errorf("%q not handled", text)
			continue
		}
		got := h.lastReply(t, convB)
		mustContain(t, "reply to "+text, got.Text, want)
		if got.ReplyTo != "m1" {
			t.Errorf("reply to %q does not answer the message: %+v", text, got)
		}
	}
	for _, tok := range []string{"ZZZZZZZZ", "nonsense"} {
		if got := h.b.Press(context.Background(), boss, convB, tok, core.DecisionApprove, nil); got != "unknown request" {
			t.Errorf("press %q = %q", tok, got)
		}
	}
	if got := h.b.Press(context.Background(), boss, convB, "ZZZZZZZZ", core.ApprovalDecision(99), nil); got != "unknown button" {
		t.Errorf("press with a bad decision = %q", got)
	}
	if n := h.d.runs.Load(); n != 0 {
		t.Errorf("tool ran %d times", n)
	}
}

func TestDeny(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.hold(t, lsCall)
	h.say(boss, convB, "deny "+tok+" too risky")
	if n := h.d.runs.Load(); n != 0 {
		t.Fatalf("denied action ran %d times", n)
	}
	if st := h.status(t, tok); st != record.StatusDenied {
		t.Errorf("status %s", st)
	}
	for _, c := range []core.Conversation{convA, convB, convDM} {
		got := h.lastReply(t, c)
		mustContain(t, "deny notice in "+c.Key(), got.Text, "Denied by beta:boss", "will not run", "Reason: too risky")
		if got.Resolution == nil || got.Resolution.Status != "denied" || got.Resolution.By != boss {
			t.Errorf("%s: resolution %+v", c, got.Resolution)
		}
	}
	s := h.signal(t)
	mustContain(t, "outcome", s.Text, "[gatehouse]", "held shell call", "denied by beta:boss: too risky", "do not run it again unless the user asks")
	if s.Conv != convA || strings.Contains(s.Text, tok) {
		t.Errorf("signal = %+v", s)
	}
	h.say(admin, convA, "/approve "+tok)
	mustContain(t, "approve after deny", h.lastReply(t, convA).Text, "already denied by beta:boss")
	if got := h.b.Press(context.Background(), admin, convA, tok, core.DecisionDeny, nil); got != "already denied by beta:boss" {
		t.Errorf("press toast = %q", got)
	}
	if n := h.d.runs.Load(); n != 0 {
		t.Errorf("tool ran %d times", n)
	}
	if got := strings.Join(h.audit(t), ","); got != "requested,denied" {
		t.Errorf("audit = %s", got)
	}
	h.noSignal(t)
}

func TestPending(t *testing.T) {
	h := newHarness(t, nil)
	h.say(boss, convB, "/pending")
	mustContain(t, "empty", h.lastReply(t, convB).Text, "No pending approvals")
	tok1 := h.hold(t, lsCall)
	tok2 := h.hold(t, llm.ToolCall{Name: "write_file", Args: `{"path":"a.txt","content":"hi"}`})
	h.say(boss, convB, "pending")
	got := h.lastReply(t, convB).Text
	mustContain(t, "pending", got, "2 pending", tok1, tok2, "`ls -la /srv`", "write_file", "content=hi, path=a.txt", "alpha:A1", "alpha:u1", "expires in 15m")
	if strings.Index(got, tok1) > strings.Index(got, tok2) {
		t.Error("pending not oldest first")
	}
	h.say(boss, convB, "/deny "+tok1)
	h.say(boss, convB, "/pending")
	if got := h.lastReply(t, convB).Text; strings.Contains(got, tok1) || !strings.Contains(got, tok2) {
		t.Errorf("after deny: %s", got)
	}
}

func TestApproveAlwaysAddsExactStandingAllow(t *testing.T) {
	h := newHarness(t, nil)
	if h.b.StandingAllowed(context.Background(), "shell", lsCall.Args) {
		t.Fatal("allowed before any approval")
	}
	tok := h.hold(t, lsCall)
	h.say(boss, convB, "/approve "+tok+" always")
	h.idle(t)
	if n := h.d.runs.Load(); n != 1 {
		t.Fatalf("ran %d times", n)
	}
	// The acknowledgement comes first, and says "standing allow added";
	// the outcome notice in the same conversation does not say it again.
	inB := h.beta.in(convB)
	if len(inB) != 2 {
		t.Fatalf("%d messages in %s, want the acknowledgement and the outcome", len(inB), convB)
	}
	mustContain(t, "acknowledgement", inB[0].Text, "Approved: running", "Standing allow #1 added")
	mustContain(t, "notice", inB[1].Text, "Approved by beta:boss", "ran")
	// Every conversation hears of the standing allow exactly once.
	for _, c := range []core.Conversation{convA, convB, convDM} {
		n := 0
		for _, r := range h.d.gateways[c.Gateway].in(c) {
			n += strings.Count(r.Text, "Standing allow #1 added")
		}
		if n != 1 {
			t.Errorf("%s heard \"Standing allow #1 added\" %d times, want once", c, n)
		}
	}
	for _, c := range []struct {
		tool, args string
		want       bool
	}{
		{"shell", lsCall.Args, true},
		{"shell", `{"command": "ls -la /srv"}`, false},
		{"shell", `{"command":"ls -la /srv; rm -rf /"}`, false},
		{"shell", `{"command":"ls"}`, false},
		{"exec", lsCall.Args, false},
	} {
		if got := h.b.StandingAllowed(context.Background(), c.tool, c.args); got != c.want {
			t.Errorf("StandingAllowed(%s, %s) = %v, want %v", c.tool, c.args, got, c.want)
		}
	}
	list, err := h.b.StandingAllows(context.Background())
	if err != nil || len(list) != 1 || list[0].AddedBy != boss || list[0].Conv != "alpha:A1" {
		t.Fatalf("StandingAllows = %+v, %v", list, err)
	}
	h.say(admin, convA, "/rules")
	mustContain(t, "/rules", h.lastReply(t, convA).Text, "#1 shell", lsCall.Args, "beta:boss")
	h.say(admin, convA, "/unallow 1")
	mustContain(t, "/unallow", h.lastReply(t, convA).Text, "Removed standing allow #1")
	if h.b.StandingAllowed(context.Background(), "shell", lsCall.Args) {
		t.Error("still allowed after /unallow")
	}
	h.say(admin, convA, "/rules")
	mustContain(t, "/rules", h.lastReply(t, convA).Text, "No standing allows")
	es, _ := h.store.QueryAudit(context.Background(), record.AuditFilter{Outcome: "unallowed"})
	if len(es) != 1 || es[0].ApprovedBy != admin {
		t.Errorf("unallow audit = %+v", es)
	}
}

func TestPressApproveAlways(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.hold(t, lsCall)
	if got := h.b.Press(context.Background(), boss, convDM, strings.ToLower(tok), core.DecisionApproveAlways, nil); got != "approved — running…" {
		t.Errorf("toast = %q", got)
	}
	h.idle(t)
	if !h.b.StandingAllowed(context.Background(), "shell", lsCall.Args) {
		t.Error("approve-always button added no standing allow")
	}
	if r := h.lastReply(t, convDM).Resolution; r == nil || r.Status != "executed" {
		t.Errorf("notify target not told: %+v", r)
	}
	// A press has no chat acknowledgement: each conversation learns of the
	// standing allow from the outcome notice, once.
	for _, c := range []core.Conversation{convA, convDM} {
		n := 0
		for _, r := range h.d.gateways[c.Gateway].in(c) {
			n += strings.Count(r.Text, "Standing allow #1 added")
		}
		if n != 1 {
			t.Errorf("%s heard \"Standing allow #1 added\" %d times, want once", c, n)
		}
	}
	if got := h.b.Press(context.Background(), admin, convA, tok, core.DecisionApprove, nil); got != "already approved (it ran) by beta:boss" {
		t.Errorf("second press = %q", got)
	}
	if n := h.d.runs.Load(); n != 1 {
		t.Errorf("ran %d times", n)
	}
}

func TestConcurrentApprovesRunOnce(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.hold(t, lsCall)
	release := make(chan struct{})
	h.d.running = func(context.Context) { <-release } // hold the run until every attempt is in
	const n = 50
	var wg sync.WaitGroup
	toasts := make([]string, n)
	for i := range n {
		wg.Go(func() {
			who, conv := boss, convB
			if i%2 == 1 {
				who, conv = admin, convA
			}
			if i%3 == 0 {
				toasts[i] = h.b.Press(context.Background(), who, conv, tok, core.DecisionApprove, nil)
				return
			}
			h.say(who, conv, "/approve "+tok)
		})
	}
	// The run is blocked; the other attempts finish on their own.
	testutil.WaitFor(t, "the approved action to run", func() bool { return h.d.runs.Load() >= 1 })
	close(release)
	wg.Wait()
	h.idle(t)
	if got := h.d.runs.Load(); got != 1 {
		t.Fatalf("50 concurrent approvals ran the tool %d times, want 1", got)
	}
	for i, s := range toasts {
		if s != "" && s != "approved — running…" && !strings.HasPrefix(s, "already approved") {
			t.Errorf("toast %d = %q", i, s)
		}
	}
	if st := h.status(t, tok); st != record.StatusExecuted {
		t.Errorf("status %s", st)
	}
	h.signal(t)
	h.noSignal(t)
}

func TestDigestMismatchRefusesToRun(t *testing.T) {
	h := newHarness(t, nil)
	a := record.Approval{
		Token: "K7Q2MX9P", Conv: convA, RequestedBy: asker,
		Call:    llm.ToolCall{Name: "shell", Args: `{"command":"rm -rf /"}`},
		Digest:  hitl.Digest(lsCall), // approved as ls, stored as rm
		Created: t0, Expires: t0.Add(ttl), Status: record.StatusPending,
	}
	if err := h.store.CreateApproval(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	h.say(boss, convB, "/approve K7Q2MX9P")
	if n := h.d.runs.Load(); n != 0 {
		t.Fatalf("altered action ran %d times", n)
	}
	if st := h.status(t, "K7Q2MX9P"); st != record.StatusFailed {
		t.Errorf("status %s, want failed", st)
	}
	mustContain(t, "notice", h.lastReply(t, convB).Text, "Refused", "no longer matches")
	mustContain(t, "outcome", h.signal(t).Text, "[gatehouse]", "was not run")
	es, _ := h.store.QueryAudit(context.Background(), record.AuditFilter{Outcome: "refused"})
	if len(es) != 1 || es[0].Detail != "digest mismatch" {
		t.Errorf("refused audit = %+v", es)
	}
}

func TestOnlyHumanMessagesAreCommands(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.hold(t, lsCall)
	for _, kind := range []core.SignalKind{core.KindApprovalOutcome, core.KindError, core.KindHeartbeat, 0} {
		s := core.Signal{Kind: kind, Conv: convB, From: boss, Text: "/approve " + tok}
		if h.b.HandleCommand(context.Background(), s) {
			t.Errorf("a %s signal was handled as a command", kind)
		}
	}
	for _, text := range []string{"I approve of this plan", "please approve " + tok, "the token is " + tok, "approved"} {
		if h.say(boss, convB, text) {
			t.Errorf("chat %q was handled as a command", text)
		}
	}
	if n := h.d.runs.Load(); n != 0 || h.status(t, tok) != record.StatusPending {
		t.Errorf("non-command resolved the approval (runs %d)", n)
	}
	if n := len(h.beta.in(convB)); n != 0 {
		t.Errorf("%d replies to non-commands", n)
	}
}

func TestTokenCollisionRetries(t *testing.T) {
	draws := []string{"AAAAAAAA", "AAAAAAAA", "BBBBBBBB"}
	var mu sync.Mutex
	h := newHarness(t, func(o *hitl.Options) {
		o.NewToken = func() (string, error) {
			mu.Lock()
			defer mu.Unlock()
			tok := draws[0]
			draws = draws[1:]
			return tok, nil
		}
	})
	if tok := h.hold(t, lsCall); tok != "AAAAAAAA" {
		t.Fatalf("first token %s", tok)
	}
	if tok := h.hold(t, lsCall); tok != "BBBBBBBB" {
		t.Errorf("second token %s, want the redraw BBBBBBBB", tok)
	}
}

func TestHoldTextNeverHasToken(t *testing.T) {
	h := newHarness(t, nil)
	text, err := h.b.Hold(context.Background(), core.Held{Conv: convA, From: asker, Call: lsCall})
	if err != nil {
		t.Fatal(err)
	}
	tok := h.lastReply(t, convA).Approval.Token
	if strings.Contains(text, tok) || strings.Contains(strings.ToUpper(text), tok) {
		t.Errorf("hold text contains the token: %q", text)
	}
	mustContain(t, "hold text", text, "needs human approval", "Do not retry", "awaits approval")
	if _, err := h.b.Hold(context.Background(), core.Held{Conv: convA, From: asker}); err == nil {
		t.Error("Hold of a call without a tool name succeeded")
	}
	if _, err := h.b.Hold(context.Background(), core.Held{Conv: convA, Call: lsCall}); err == nil {
		t.Error("Hold on behalf of nobody (empty From) succeeded")
	}
}

func TestRecoverMarksInterruptedRuns(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.hold(t, lsCall)
	if _, err := h.store.ClaimApproval(context.Background(), tok, record.StatusExecuting, boss, "", t0); err != nil {
		t.Fatal(err)
	}
	n, err := h.b.Recover(context.Background())
	if n != 1 || err != nil {
		t.Fatalf("Recover = %d, %v", n, err)
	}
	if st := h.status(t, tok); st != record.StatusInterrupted {
		t.Errorf("status %s", st)
	}
	if h.d.runs.Load() != 0 {
		t.Error("an interrupted run was re-run")
	}
	mustContain(t, "outcome", h.signal(t).Text, "[gatehouse]", "bot stopped", "not run again")
	mustContain(t, "notice", h.lastReply(t, convA).Text, "Interrupted")
}

func TestRequestMessageRendersArguments(t *testing.T) {
	for _, c := range []struct {
		name string
		call llm.ToolCall
		want []string
	}{
		{"shell", lsCall, []string{"`ls -la /srv`"}},
		{"multi-line command", llm.ToolCall{Name: "shell", Args: `{"command":"cd /srv\nmake"}`}, []string{"```\ncd /srv\nmake\n```"}},
		{"backticks", llm.ToolCall{Name: "shell", Args: "{\"command\":\"echo `date`\"}"}, []string{"`` echo `date` ``"}},
		{"fields", llm.ToolCall{Name: "write_file", Args: `{"path":"a.txt","content":"one\ntwo","mode":420}`},
			[]string{"content:\n```\none\ntwo\n```", "mode: `420`", "path: `a.txt`"}},
		{"not json", llm.ToolCall{Name: "odd", Args: `not json`}, []string{"`not json`"}},
	} {
		h := newHarness(t, nil)
		h.hold(t, c.call)
		mustContain(t, c.name, h.lastReply(t, convA).Text, c.want...)
	}
}

func TestRunDoesNotRecover(t *testing.T) {
	// An approval left executing in the store: the App calls Recover once
	// before anything can claim; Run must not mark it a second time (it
	// could be a run of this very process by then).
	st := hitl.NewMemoryStore()
	a := record.Approval{Token: "K7Q2MX9P", Conv: convA, RequestedBy: asker, Call: lsCall, Digest: hitl.Digest(lsCall),
		Status: record.StatusPending, Created: t0, Expires: t0.Add(ttl)}
	if err := st.CreateApproval(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimApproval(context.Background(), a.Token, record.StatusExecuting, boss, "", t0); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(o *hitl.Options) { o.Store = st })
	got, err := st.Approval(context.Background(), a.Token)
	if err != nil || got.Status != record.StatusExecuting {
		t.Fatalf("after Run started: %s, %v; want executing (Run does not recover)", got.Status, err)
	}
	if n := len(h.alpha.in(convA)); n != 0 {
		t.Errorf("Run announced %d messages", n)
	}
	if n, err := h.b.Recover(context.Background()); n != 1 || err != nil {
		t.Fatalf("Recover = %d, %v", n, err)
	}
	mustContain(t, "notice", h.lastReply(t, convA).Text, "Interrupted", "K7Q2MX9P", "approved by beta:boss")
	if s := h.signal(t); s.Conv != convA || s.From != asker || strings.Contains(s.Text, "K7Q2MX9P") {
		t.Errorf("signal = %+v", s)
	}
}

func TestTokensNeverLogged(t *testing.T) {
	h := newHarness(t, nil)
	ran := h.hold(t, lsCall)
	h.say(eve, convB, "/approve "+ran) // refused: logged at warn
	h.say(boss, convB, "/approve "+ran)
	h.idle(t)
	denied := h.hold(t, lsCall)
	h.say(boss, convB, "/deny "+denied+" no")
	expired := h.hold(t, lsCall)
	h.clock.Advance(2 * ttl)
	if _, err := h.b.ExpireDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, `"approval":"`) {
		t.Fatalf("log lines name no approval reference:\n%s", logs)
	}
	for _, tok := range []string{ran, denied, expired} {
		if strings.Contains(strings.ToUpper(logs), tok) {
			t.Fatalf("token %s in the log:\n%s", tok, logs)
		}
	}
}

func TestInvisibleAndBidiCharactersAreEscaped(t *testing.T) {
	// What runs: `echo safe<RLO>; rm -rf ~ #<LRI>x<CR>`; raw, a chat app
	// would show it reordered. The model may send the characters as JSON
	// escapes or raw; a raw CR makes the JSON invalid (shown as it is).
	for name, args := range map[string]string{
		"json escapes": `{"command":"echo safe\u202e; rm -rf ~ #\u2066x\r","note\u200b":"a\tb"}`,
		"raw":          "{\"command\":\"echo safe\u202e; rm -rf ~ #\u2066x\\r\",\"note\u200b\":\"a\\tb\"}",
		"invalid json": "echo safe\u202e; rm -rf ~ #\u2066x\r note\u200b a\tb",
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			tok := h.hold(t, llm.ToolCall{Name: "shell", Args: args})
			req := h.lastReply(t, convA)
			h.say(boss, convB, "/pending")
			pending := h.lastReply(t, convB).Text
			h.say(boss, convB, "/show "+tok)
			show := h.lastReply(t, convB).Text
			h.say(boss, convB, "/deny "+tok)
			denied := h.lastReply(t, convB).Text
			for what, text := range map[string]string{
				"request": req.Text, "summary": req.Approval.Summary, "pending": pending, "show": show, "deny notice": denied,
			} {
				if i := strings.IndexFunc(text, func(r rune) bool { return r == '\u202e' || r == '\u2066' || r == '\u200b' || r == '\r' || r == '\t' }); i >= 0 {
					t.Errorf("%s shows an invisible character raw at byte %d: %q", what, i, text)
				}
				mustContain(t, what, text, `\u202e`, `\u2066`)
			}
			mustContain(t, "summary", req.Approval.Summary, `\r`)
			mustContain(t, "request", req.Text, `\r`, `\u200b`, `a\tb`,
				"contains invisible or bidi characters — /show "+tok+" shows it escaped")
		})
	}
	h := newHarness(t, nil)
	h.hold(t, lsCall)
	if got := h.lastReply(t, convA).Text; strings.Contains(got, "invisible") {
		t.Errorf("a request without such characters warns about them:\n%s", got)
	}
}
