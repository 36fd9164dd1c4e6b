package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestUndoByApproverInGroup: the binary with Telegram against the fake and
// the console beside it, as issue 21 (item 10) ran it: a member asks in a
// group, the approver approves from their DM (the request's button there,
// hitl.notify), the command runs; the member's /undo in the group is
// refused, the approver's /undo there restores the workspace and is
// answered. Reported as never answered with nothing restored; not
// reproduced here (it passes on main too).
func TestUndoByApproverInGroup(t *testing.T) {
	t.Parallel()
	tg := faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	t.Cleanup(tg.Close)
	ai := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		last := lastMessage(r)
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "make the file"):
			return fakeopenai.ToolCalls(fakeopenai.Call{Name: "shell", Args: `{"command":"echo made > made.txt"}`})
		case last.Role == "tool":
			return fakeopenai.Text("MODEL: it awaits approval.")
		}
		return fakeopenai.Text("MODEL: ok.")
	})
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fmt.Sprintf(`llm:
  providers:
    - {name: fake, base_url: %s, api_key: "sk-fake-key-0000000000", model: fake-model}
gateways:
  console: {enabled: true}
  telegram: {token: %q, api_url: %q, allow: ["telegram:1002"]}
hitl:
  approvers: [console:local, telegram:1001]
  notify: [telegram:1001]
tools: {workspace: ./workspace}
store: {dsn: gatehouse.db}
http: {listen: ""}
log: {level: info, format: json}
`, ai.URL(), tg.Token(), tg.URL()))
	startBot(t, dir, baseEnv(dir))
	owner := faketg.User{ID: 1001, FirstName: "Olga", Username: "olga"}
	member := faketg.User{ID: 1002, FirstName: "Gus", Username: "gus"}
	group := faketg.Chat{ID: -100777, Type: "group", Title: "team"}
	t.Cleanup(func() {
		if t.Failed() {
			for _, s := range tg.Sent() {
				t.Logf("sent to %d: %q", s.ChatID, s.Plain)
			}
		}
	})
	waitSent := func(chat int64, want string) faketg.Sent {
		t.Helper()
		var got faketg.Sent
		testutil.WaitFor(t, fmt.Sprintf("%q in chat %d", want, chat), func() bool {
			for _, s := range tg.Sent() {
				if s.ChatID == chat && strings.Contains(s.Plain, want) {
					got = s
					return true
				}
			}
			return false
		})
		return got
	}
	tg.InjectMessage(faketg.Message{From: &member, Chat: group, Text: "@" + tg.Bot().Username + " make the file"})
	req := waitSent(owner.ID, "Approval needed")
	token, _ := strings.CutPrefix(req.Markup.Buttons()[0].CallbackData, "a:")
	tg.InjectCallback(faketg.Callback{From: owner, ChatID: owner.ID, MessageID: req.MessageID, Data: "a:" + token})
	made := filepath.Join(dir, "workspace", "made.txt")
	testutil.WaitFor(t, "the approved write", func() bool { _, err := os.Stat(made); return err == nil })
	waitSent(group.ID, "MODEL: ok.")

	// undo sends /undo from u in the group and returns the answer; while
	// the outcome turn is still ending (its reply is sent just before it
	// ends), the answer is that a turn is in progress, and it tries again.
	undo := func(u faketg.User, text string) string {
		t.Helper()
		for range 50 {
			before := len(tg.Sent())
			tg.InjectMessage(faketg.Message{From: &u, Chat: group, Text: text})
			var got string
			testutil.WaitFor(t, "the answer to "+text+" from "+u.Username, func() bool {
				for _, s := range tg.Sent()[before:] {
					if s.ChatID == group.ID && s.Method == "sendMessage" {
						got = s.Plain
						return true
					}
				}
				return false
			})
			if !strings.Contains(got, "A turn is in progress") {
				return got
			}
		}
		t.Fatal("a turn stayed in progress")
		return ""
	}
	if got := undo(member, "/undo@"+tg.Bot().Username); !strings.Contains(got, "Not authorised (your identity is telegram:1002)") {
		t.Fatalf("the member's /undo was answered %q; want it refused", got)
	}
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("the member's refused /undo changed the workspace: %v", err)
	}
	if got := undo(owner, "/undo"); !strings.Contains(got, "Restored the workspace to before shell") {
		t.Fatalf("the approver's /undo was answered %q; want the workspace restored", got)
	}
	if _, err := os.Stat(made); !os.IsNotExist(err) {
		t.Fatalf("made.txt is still there after the approver's /undo: %v", err)
	}
}
