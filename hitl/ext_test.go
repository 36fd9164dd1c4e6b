package hitl_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

func TestCommandsListsEveryVerb(t *testing.T) {
	h := newHarness(t, nil)
	got := map[string]core.CommandHelp{}
	for _, c := range h.b.Commands() {
		if c.Summary == "" || strings.Contains(c.Summary, "\n") || strings.HasPrefix(c.Name, "/") {
			t.Errorf("%+v: want a name without slash and a one-line summary", c)
		}
		got[c.Name] = c
	}
	for name, args := range map[string]string{
		"approve": "<token> [always | for 30m]", "deny": "<token> [reason]", "pending": "",
		"show": "<token>", "rules": "", "unallow": "<number>", "audit": "[rows | token]",
	} {
		c, ok := got[name]
		if !ok {
			t.Errorf("/%s is not listed", name)
			continue
		}
		if c.Args != args {
			t.Errorf("/%s args %q, want %q", name, c.Args, args)
		}
		// Every listed command is one the broker takes.
		if _, ok := hitl.ParseCommand("/" + name); !ok {
			t.Errorf("/%s is listed but not parsed as a command", name)
		}
	}
	if len(got) != 7 {
		t.Errorf("%d commands listed, want 7", len(got))
	}
}

func TestStatusLines(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	const approvers = "Approvers: beta:boss; alpha:admin"
	if got := h.b.StatusLines(ctx, convA); len(got) != 2 || got[0] != approvers || got[1] != "No pending approvals here." {
		t.Fatalf("status with nothing pending = %q", got)
	}
	first := h.hold(t, lsCall)
	second := h.hold(t, llm.ToolCall{ID: "c2", Name: "write_file", Args: `{"content":"x","path":"a"}`})
	got := strings.Join(h.b.StatusLines(ctx, convA), "\n")
	want := approvers + "\nPending approvals here: 2 (" + first + " shell, " + second + " write_file)"
	if got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
	if got := h.b.StatusLines(ctx, convB); len(got) != 2 || got[0] != approvers || got[1] != "No pending approvals here." {
		t.Errorf("another conversation's status = %q", got)
	}
	started, release := blockRuns(h)
	defer release()
	h.say(boss, convB, "/approve "+first)
	<-started
	mustContain(t, "status while running", strings.Join(h.b.StatusLines(ctx, convA), "\n"),
		"Pending approvals here: 1 ("+second+" write_file)", "Approved actions running here: 1")
}

func TestCancelRuns(t *testing.T) {
	h := newHarness(t, nil)
	started, unblock := blockRuns(h)
	release := sync.OnceFunc(unblock)
	defer release()
	tok := h.hold(t, lsCall)
	h.say(boss, convB, "/approve "+tok)
	<-started
	// Runs belong to the conversation that asked, not the approver's.
	if n := h.b.CancelRuns(convB); n != 0 {
		t.Fatalf("CancelRuns(approver's conversation) = %d, want 0", n)
	}
	if n := h.b.CancelRuns(convA); n != 1 {
		t.Fatalf("CancelRuns = %d, want 1", n)
	}
	h.idle(t)
	if n := h.b.CancelRuns(convA); n != 0 {
		t.Errorf("CancelRuns after the run ended = %d, want 0", n)
	}
	if got := h.b.StatusLines(context.Background(), convA); len(got) != 2 || got[1] != "No pending approvals here." {
		t.Errorf("status after the run ended = %q", got)
	}
	if st := h.status(t, tok); st != record.StatusFailed {
		t.Errorf("status %s, want failed", st)
	}
	for _, c := range []core.Conversation{convA, convB, convDM} {
		r := h.lastReply(t, c)
		mustContain(t, "notice in "+c.Key(), r.Text, "was cancelled (/cancel) while it ran")
		if r.Resolution == nil || r.Resolution.Status != "failed" {
			t.Errorf("%s: resolution %+v", c, r.Resolution)
		}
	}
	mustContain(t, "outcome signal", h.signal(t).Text, "[gatehouse]", "cancelled it (/cancel)")
	if got := strings.Join(h.audit(t), ","); got != "requested,approved,failed" {
		t.Errorf("audit = %s", got)
	}
	// The broker still runs the next approval normally.
	release()
	tok2 := h.hold(t, lsCall)
	h.say(boss, convB, "/approve "+tok2)
	h.idle(t)
	if st := h.status(t, tok2); st != record.StatusExecuted {
		t.Errorf("next approval: status %s, want executed", st)
	}
}
