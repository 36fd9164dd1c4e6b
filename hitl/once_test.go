package hitl_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// TestApprovedOnceNoStandingNoGrant: a request for enable_skill or
// write_skill offers no "always" nor "30 min" (buttons, hint), and a
// typed always or for 30m, or the always or 30 min button of an older
// message, is refused with a clear message, the request still pending
// and nothing run; a standing allow or a grant stored for exactly that
// call (before, by hand or by an older version) lets nothing through;
// the plain /approve runs it once and adds nothing.
func TestApprovedOnceNoStandingNoGrant(t *testing.T) {
	ctx := context.Background()
	for _, tool := range []string{core.EnableSkillTool, core.WriteSkillTool} {
		h := newHarness(t, nil)
		call := llm.ToolCall{ID: "w1", Name: tool, Args: `{"name":"rotate-cert","digest":"abc"}`}
		if _, err := h.standing.AddStandingAllow(ctx, record.StandingAllow{Tool: tool, Args: call.Args, AddedBy: boss, Conv: convA.Key()}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.standing.AddGrant(ctx, record.Grant{Tool: tool, Args: call.Args, Conv: convA.Key(), GrantedBy: boss,
			Granted: t0, Expires: t0.Add(ttl)}); err != nil {
			t.Fatal(err)
		}
		if h.b.StandingAllowed(ctx, tool, call.Args) {
			t.Errorf("%s: a standing allow lets it through", tool)
		}
		if rule, ok := h.granted(convA, asker, call); ok {
			t.Errorf("%s: a grant lets it through (%s)", tool, rule)
		}
		tok := h.hold(t, call)
		for _, conv := range []core.Conversation{convA, convDM} {
			p := h.lastReply(t, conv).Approval
			if p == nil || p.AllowAlways || p.AllowGrant || strings.Contains(p.Hint, "always") || strings.Contains(p.Hint, "30m") {
				t.Errorf("%s: the request in %s offers always or a grant: %+v", tool, conv.Key(), p)
			}
		}
		for _, typed := range []string{" always", " for 30m", " for 2h"} {
			h.say(boss, convB, "/approve "+tok+typed)
			mustContain(t, tool+typed, h.lastReply(t, convB).Text, "approved only once", "/approve "+tok)
		}
		for _, d := range []core.ApprovalDecision{core.DecisionApproveAlways, core.DecisionApproveGrant} {
			if got := h.b.Press(ctx, boss, convB, tok, d, nil); !strings.Contains(got, "only once") {
				t.Errorf("%s: press %v: toast %q", tool, d, got)
			}
		}
		if s := h.status(t, tok); s != record.StatusPending || h.d.runs.Load() != 0 {
			t.Fatalf("%s: after the refusals: %s, %d runs; want pending, none", tool, s, h.d.runs.Load())
		}
		h.say(boss, convB, "/approve "+tok)
		h.idle(t)
		if n := h.d.runs.Load(); n != 1 {
			t.Fatalf("%s: %d runs after /approve, want 1", tool, n)
		}
		if got := h.lastReply(t, convB).Text; strings.Contains(got, "Standing allow #") || strings.Contains(got, "Grant #") {
			t.Errorf("%s: %q", tool, got)
		}
	}
}

// presenter is a filesDispatcher that presents write_skill calls as the
// files given.
type presenter struct {
	*filesDispatcher
	files []hitl.PresentedFile
}

func (p presenter) Present(call llm.ToolCall) ([]hitl.PresentedFile, bool) {
	return p.files, call.Name == core.WriteSkillTool
}

// TestPresentedCallShortenedAttachesTheWhole: a call the dispatcher
// presents as files (write_skill) is shown as those files; too long for a
// message, each is cut and the request goes with a file holding every one
// of them whole.
func TestPresentedCallShortenedAttachesTheWhole(t *testing.T) {
	h, fd, _ := newFilesHarness(t, nil)
	long := strings.Repeat("echo step LONG-SCRIPT\n", 400) + "echo LAST-LINE\n"
	md := "---\nname: rotate-cert\ndescription: d\n---\nBODY\n"
	p := presenter{filesDispatcher: fd, files: []hitl.PresentedFile{{Path: "SKILL.md", Content: md}, {Path: "scripts/rotate.sh", Content: long}}}
	b, err := hitl.NewBroker(p, hitl.Options{TTL: ttl, Approvers: []core.Identity{boss}, Store: h.store, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	call := llm.ToolCall{ID: "w1", Name: core.WriteSkillTool, Args: `{"name":"rotate-cert"}`}
	if _, err := b.Hold(context.Background(), core.Held{Conv: convA, From: asker, Call: call}); err != nil {
		t.Fatal(err)
	}
	req := h.lastReply(t, convA)
	mustContain(t, "the request", req.Request, "writes 2 files", "SKILL.md", md, "scripts/rotate.sh", "LONG-SCRIPT")
	if strings.Contains(req.Request, "LAST-LINE") {
		t.Errorf("the request was not cut: %d runes", len(req.Request))
	}
	files := fd.sent(convA)
	if len(files) != 1 {
		t.Fatalf("%d files attached, want 1", len(files))
	}
	mustContain(t, "the file", string(files[0].Data), "===== SKILL.md =====\n"+md, "===== scripts/rotate.sh =====\n"+long)
}
