package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// phones is the binary with the console (where requests are asked for)
// and Telegram, Discord and Slack on their fakes, each with a conversation
// in hitl.notify: every request goes to a phone on each platform.
type phones struct {
	p      *botProc
	tg     *faketg.Server
	dc     *fakediscord.Server
	sl     *fakeslack.Server
	dcChan string // the Discord DM channel of the approver discord:500
}

const (
	phoneTG    = 1001    // telegram:1001, an approver; its DM is a notify target
	phoneSlack = "C0OPS" // a Slack channel in hitl.notify
)

func startPhones(t *testing.T, respond func(fakeopenai.Request) fakeopenai.Step, workspace map[string]string) *phones {
	t.Helper()
	const dcToken, slBot, slApp = "MTk5OTk5.DIFFS-discord-token-secret", "xoxb-1-DIFFS-slack-bot-token", "xapp-1-A0FAKE-DIFFS-slack-app-token"
	ph := &phones{
		tg: faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond}),
		dc: fakediscord.New(fakediscord.Options{Token: dcToken, HeartbeatInterval: 200 * time.Millisecond}),
		sl: fakeslack.New(fakeslack.Options{BotToken: slBot, AppToken: slApp}),
	}
	t.Cleanup(ph.tg.Close)
	t.Cleanup(ph.dc.Close)
	t.Cleanup(ph.sl.Close)
	ph.dcChan = ph.dc.DMChannel("500")
	ai := startFake(t, respond)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fmt.Sprintf(`llm:
  providers:
    - {name: fake, base_url: %s, api_key: "sk-fake-key-0000000000", model: fake-model}
gateways:
  console: {enabled: true}
  telegram: {token: %q, api_url: %q}
  discord: {token: ${DISCORD_BOT_TOKEN}, api_url: %q}
  slack: {bot_token: ${SLACK_BOT_TOKEN}, app_token: ${SLACK_APP_TOKEN}, api_url: %q}
hitl:
  approvers: [console:local, "telegram:%d", "discord:500"]
  notify: ["telegram:%d", "discord:%s", "slack:%s"]
tools: {workspace: ./workspace}
store: {dsn: gatehouse.db}
http: {listen: ""}
log: {level: info, format: json}
`, ai.URL(), ph.tg.Token(), ph.tg.URL(), ph.dc.URL(), ph.sl.URL()+"/api/", phoneTG, phoneTG, ph.dcChan, phoneSlack))
	for name, content := range workspace {
		writeFile(t, dir, "workspace/"+name, content)
	}
	ph.p = startBot(t, dir, baseEnv(dir, "DISCORD_BOT_TOKEN="+dcToken, "SLACK_BOT_TOKEN="+slBot, "SLACK_APP_TOKEN="+slApp))
	testutil.WaitFor(t, "the Slack socket", func() bool { return ph.sl.Connections() > 0 })
	testutil.WaitFor(t, "Discord's slash commands", func() bool { return len(ph.dc.Commands("")) > 0 })
	t.Cleanup(func() {
		if t.Failed() {
			for _, s := range ph.tg.Sent() {
				t.Logf("telegram %d: %q", s.ChatID, s.Plain)
			}
			for _, s := range ph.dc.Messages(ph.dcChan) {
				t.Logf("discord: %q", s.Content)
			}
			for _, s := range ph.sl.Posts(phoneSlack) {
				t.Logf("slack: %q %s", s.Text, s.Blocks)
			}
		}
	})
	return ph
}

// stop ends the bot as a service manager would (Telegram and the others
// keep it running once the console's input ends).
func (ph *phones) stop(t *testing.T) {
	t.Helper()
	if err := ph.p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := ph.p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// request is one platform's approval request as the fakes saw it: its
// text and whether it has buttons.
type request struct {
	text    string
	buttons bool
}

// requests waits for the approval request on each platform.
func (ph *phones) requests(t *testing.T, want string) map[string]request {
	t.Helper()
	out := map[string]request{}
	testutil.WaitFor(t, "the request on Telegram, Discord and Slack", func() bool {
		for _, s := range ph.tg.Sent() {
			if s.ChatID == phoneTG && s.Method == "sendMessage" && strings.Contains(s.Plain, want) {
				out["telegram"] = request{s.Plain, s.Markup != nil && len(s.Markup.Buttons()) > 0}
			}
		}
		for _, s := range ph.dc.Messages(ph.dcChan) {
			if strings.Contains(s.Content, want) {
				out["discord"] = request{s.Content, len(s.Components) > 0}
			}
		}
		for _, s := range ph.sl.Posts(phoneSlack) {
			text := s.Text // a plain post; a request with buttons is in its sections
			var blocks []struct {
				Text struct{ Text string } `json:"text"`
			}
			if json.Unmarshal(s.Blocks, &blocks) == nil && len(blocks) > 0 {
				text = ""
				for _, b := range blocks {
					text += b.Text.Text
				}
			}
			if strings.Contains(text, want) {
				out["slack"] = request{text, len(s.Buttons()) > 0}
			}
		}
		return len(out) == 3
	})
	return out
}

// attached returns the file each platform received under name.
func (ph *phones) attached(t *testing.T, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	testutil.WaitFor(t, name+" on Telegram, Discord and Slack", func() bool {
		for _, u := range ph.tg.Uploads() {
			if u.ChatID == phoneTG && u.FileName == name && u.Method == "sendDocument" {
				out["telegram"] = string(u.Data)
			}
		}
		for _, f := range ph.dc.Files() {
			if f.ChannelID == ph.dcChan && f.Name == name {
				out["discord"] = string(f.Data)
			}
		}
		for _, f := range ph.sl.SharedFiles() {
			if f.Channel == phoneSlack && f.Name == name {
				out["slack"] = string(f.Data)
			}
		}
		return len(out) == 3
	})
	return out
}

// notes200 is a 200-line file whose lines are long; changed replaces the
// lines it names.
func notes200(changed map[int]string) string {
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		if s, ok := changed[i]; ok {
			b.WriteString(s + "\n")
			continue
		}
		fmt.Fprintf(&b, "line %03d %s\n", i, strings.Repeat("lorem ipsum ", 20))
	}
	return b.String()
}

// TestWriteFileDiffOnEveryPhone is issue 30 item 1 through the binary: a
// write_file of a 200-line file changing 3 lines is held with a diff
// headed "+3 −3 lines" on every platform; the diff of long lines does not
// fit one message, so the request's first line says it was shortened and
// the whole diff arrives as TOKEN.diff on Telegram (sendDocument), Discord
// (a message with an attachment) and Slack (files upload v2), with the
// request's buttons; the console prints it whole.
func TestWriteFileDiffOnEveryPhone(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("dolor sit amet ", 20)
	newContent := notes200(map[int]string{20: "CHANGED twenty " + long, 100: "CHANGED hundred " + long, 190: "CHANGED one-ninety " + long})
	args, _ := json.Marshal(map[string]string{"path": "notes.txt", "content": newContent})
	ph := startPhones(t, func(r fakeopenai.Request) fakeopenai.Step {
		if last := lastMessage(r); last.Role == "user" && strings.Contains(last.Content, "edit the notes") {
			return fakeopenai.ToolCalls(fakeopenai.Call{ID: "w1", Name: "write_file", Args: string(args)})
		}
		return fakeopenai.Text("MODEL: done.")
	}, map[string]string{"notes.txt": notes200(nil)})

	ph.p.send("edit the notes")
	token := expectToken(t, ph.p)
	if out := ph.p.stdout(); !strings.Contains(out, "`notes.txt`: +3 −3 lines (now sha256:") || !strings.Contains(out, "+CHANGED one-ninety "+long) {
		t.Errorf("the console does not show the whole diff:\n%s", out)
	}
	reqs := ph.requests(t, "+3 −3 lines")
	for platform, r := range reqs {
		first, _, _ := strings.Cut(r.text, "\n")
		if !strings.Contains(first, "shortened: the whole call is attached, "+token+".diff") {
			t.Errorf("%s: first line %q", platform, first)
		}
		if !strings.Contains(r.text, "`notes.txt`: +3 −3 lines (now sha256:") && !strings.Contains(r.text, "notes.txt: +3 −3 lines (now sha256:") {
			t.Errorf("%s: no headline:\n%s", platform, r.text)
		}
		if !r.buttons {
			t.Errorf("%s: the request has no buttons", platform)
		}
	}
	for platform, diff := range ph.attached(t, token+".diff") {
		for _, want := range []string{"--- a/notes.txt\n+++ b/notes.txt\n", "+CHANGED twenty " + long, "+CHANGED hundred " + long, "+CHANGED one-ninety " + long, "-line 190 "} {
			if !strings.Contains(diff, want) {
				t.Errorf("%s: the attached diff has no %q", platform, want)
			}
		}
		if n := strings.Count(diff, "\n@@ -"); n != 3 {
			t.Errorf("%s: %d hunks, want 3:\n%s", platform, n, diff)
		}
	}
	ph.stop(t)
}

// TestLongCommandRefusedAttachmentNoButtons: a 10 KB shell command is held;
// every platform refuses the upload of the whole command, so each request
// says it could not be attached and has no buttons; /show TOKEN prints the
// whole command to an approver on Telegram, whose typed /approve runs it.
func TestLongCommandRefusedAttachmentNoButtons(t *testing.T) {
	t.Parallel()
	marker := strings.Repeat("0123456789", 1024) // 10 KB
	command := "echo " + marker + " > long.txt"
	args, _ := json.Marshal(map[string]string{"command": command})
	ph := startPhones(t, func(r fakeopenai.Request) fakeopenai.Step {
		if last := lastMessage(r); last.Role == "user" && strings.Contains(last.Content, "run the long one") {
			return fakeopenai.ToolCalls(fakeopenai.Call{ID: "s1", Name: "shell", Args: string(args)})
		}
		return fakeopenai.Text("MODEL: done.")
	}, nil)
	ph.tg.RefuseUploads(true)
	ph.dc.RefuseUploads(true)
	ph.sl.RefuseUploads(true)

	ph.p.send("run the long one")
	token := expectToken(t, ph.p)
	for platform, r := range ph.requests(t, "could not be attached") {
		first, _, _ := strings.Cut(r.text, "\n")
		if !strings.Contains(first, "shortened: the whole call could not be attached; /show "+token+" prints it") {
			t.Errorf("%s: first line %q", platform, first)
		}
		if r.buttons {
			t.Errorf("%s: the request has buttons though the whole command was not sent", platform)
		}
		if !strings.Contains(r.text, "/approve "+token) {
			t.Errorf("%s: the request does not say how to approve by typing:\n%s", platform, r.text)
		}
	}
	if n := len(ph.tg.Uploads()) + len(ph.dc.Files()) + len(ph.sl.SharedFiles()); n != 0 {
		t.Errorf("%d files recorded though every upload was refused", n)
	}
	owner := faketg.User{ID: phoneTG, FirstName: "Olga", Username: "olga"}
	dm := faketg.Chat{ID: phoneTG, Type: "private"}
	before := len(ph.tg.Sent())
	ph.tg.InjectMessage(faketg.Message{From: &owner, Chat: dm, Text: "/show " + token})
	testutil.WaitFor(t, "the whole command in /show's answer", func() bool {
		var all strings.Builder
		for _, s := range ph.tg.Sent()[before:] {
			if s.ChatID == phoneTG && s.Method == "sendMessage" {
				all.WriteString(s.Plain)
			}
		}
		return strings.Contains(all.String(), marker+" > long.txt")
	})
	ph.tg.InjectMessage(faketg.Message{From: &owner, Chat: dm, Text: "/approve " + token})
	expectLine(t, ph.p, "Approved by telegram:1001")
	ph.stop(t)
}
