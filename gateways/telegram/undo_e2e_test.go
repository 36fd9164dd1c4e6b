package telegram_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestE2EApproverUndoesApprovedCallInGroup: issue 21's item 10 as
// reported: a member asks in a group, the approver approves by typing in
// their DM, the write runs; the member's /undo in the group is refused,
// the approver's /undo there restores the workspace at once and says so
// (reported as never answered, nothing restored; not reproduced here).
func TestE2EApproverUndoesApprovedCallInGroup(t *testing.T) {
	e := startE2E(t)
	gatewaytest.PushShellTurn(e.ai)
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: team, Text: "@gatehouse_bot add a line to ran.txt"})
	_, token := e.waitRequest(t, team.ID)
	e.tg.InjectMessage(faketg.Message{From: &owner, Chat: faketg.Chat{ID: owner.ID, Type: "private"}, Text: "/approve " + token})
	e.waitSent(t, team.ID, "It ran: ran.txt has a new line.")
	if n := e.runs(t); n != 1 {
		t.Fatalf("ran %d times", n)
	}

	if got := undoIn(t, e, guest); !strings.Contains(got, "Not authorised (your identity is telegram:1002)") {
		t.Fatalf("the member's /undo was answered %q; want it refused", got)
	}
	if n := e.runs(t); n != 1 {
		t.Fatalf("a refused /undo changed the workspace: %d runs in ran.txt", n)
	}
	if got := undoIn(t, e, owner); !strings.Contains(got, "Restored the workspace to before shell") {
		t.Fatalf("the approver's /undo was answered %q; want the workspace restored", got)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "ran.txt")); !os.IsNotExist(err) {
		t.Fatalf("ran.txt is still there after the approver's /undo: %v", err)
	}
}

// TestE2EApproverUndoesButtonApprovedCallInGroup is the same with the
// request also sent to the approver's DM (hitl.notify) and approved there
// by its button, the write a write_file.
func TestE2EApproverUndoesButtonApprovedCallInGroup(t *testing.T) {
	e := startE2EWith(t, faketg.Options{}, func(c *config.Config) {
		c.HITL.Notify = []string{"telegram:1001"}
		c.Policy.Rules = append([]config.Rule{{Tool: "write_file", Decision: "approve"}}, c.Policy.Rules...)
	})
	e.ai.Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: "call_w", Name: "write_file", Args: `{"path":"made.txt","content":"made"}`}),
		fakeoai.Text("I asked an approver to allow it."),
		fakeoai.Text("It ran: made.txt is there."),
	)
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: team, Text: "@gatehouse_bot make made.txt"})
	e.waitRequest(t, team.ID)
	req, token := e.waitRequest(t, owner.ID)
	e.tg.InjectCallback(faketg.Callback{From: owner, ChatID: owner.ID, MessageID: req.MessageID, Data: "a:" + token})
	e.waitSent(t, team.ID, "It ran: made.txt is there.")
	made := filepath.Join(e.workspace, "made.txt")
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("the approved write did not run: %v", err)
	}

	if got := undoIn(t, e, guest); !strings.Contains(got, "Not authorised (your identity is telegram:1002)") {
		t.Fatalf("the member's /undo was answered %q; want it refused", got)
	}
	if got := undoIn(t, e, owner); !strings.Contains(got, "Restored the workspace to before write_file") {
		t.Fatalf("the approver's /undo was answered %q; want the workspace restored", got)
	}
	if _, err := os.Stat(made); !os.IsNotExist(err) {
		t.Fatalf("made.txt is still there after the approver's /undo: %v", err)
	}
}

// undoIn sends /undo from u in the team group and returns the answer.
// It is sent once: a turn whose answer was seen is over for /undo.
func undoIn(t *testing.T, e *e2e, u faketg.User) string {
	t.Helper()
	before := len(e.tg.Sent())
	e.tg.InjectMessage(faketg.Message{From: &u, Chat: team, Text: "/undo"})
	var got string
	testutil.WaitFor(t, "the answer to /undo from "+u.Username, func() bool {
		for _, s := range e.tg.Sent()[before:] {
			if s.ChatID == team.ID && s.Method == "sendMessage" {
				got = s.Plain
				return true
			}
		}
		return false
	})
	return got
}
