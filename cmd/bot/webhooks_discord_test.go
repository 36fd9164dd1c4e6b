package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// alertBody is an Alertmanager notification of the group DiskFull with
// status and one alert per fingerprint (one incident: one groupKey).
func alertBody(status string, fingerprints ...string) string {
	var alerts []string
	for _, fp := range fingerprints {
		alerts = append(alerts, fmt.Sprintf(`{"status":%q,"labels":{"alertname":"DiskFull","instance":"db-%s"},`+
			`"annotations":{"summary":"disk 95%% full"},"startsAt":"2026-01-01T00:00:00Z","fingerprint":%q}`, status, fp, fp))
	}
	return fmt.Sprintf(`{"version":"4","groupKey":"{}:{alertname=\"DiskFull\"}","status":%q,"receiver":"gatehouse",`+
		`"groupLabels":{"alertname":"DiskFull"},"alerts":[%s]}`, status, strings.Join(alerts, ","))
}

// threadModel answers an incident's turns "MODEL: looked into it", asks
// to run the cleanup when a person in the thread says so, and reports
// the command's end.
func threadModel(r fakeopenai.Request) fakeopenai.Step {
	last := lastMessage(r)
	switch {
	case last.Role == "user" && strings.Contains(last.Content, "please clean up"):
		return fakeopenai.ToolCalls(fakeopenai.Call{Name: "shell", Args: `{"command":"echo cleaned"}`})
	case last.Role == "tool":
		return fakeopenai.Text("MODEL: the cleanup awaits approval.")
	case last.Role == "user" && strings.Contains(last.Content, "and ran"):
		return fakeopenai.Text("MODEL: the cleanup ran.")
	}
	return fakeopenai.Text("MODEL: looked into it")
}

// history reports whether a model request carries text in a message
// before its last: the conversation's history.
func history(r fakeopenai.Request, text string) bool {
	for _, m := range r.Messages[:max(len(r.Messages)-1, 0)] {
		if strings.Contains(m.Content, text) {
			return true
		}
	}
	return false
}

// TestDiscordIncidentThread is issue 31's "one thread per incident" on
// Discord: the incident's first delivery posts its headline in the
// configured channel and starts a thread from it (a channel of its own);
// the turn's reply is in the thread; a person there talks to the bot
// without a mention and approves its held call with the thread's buttons;
// a later delivery of the same incident and its resolution run in the
// same thread, with the thread's history in their turns.
func TestDiscordIncidentThread(t *testing.T) {
	t.Parallel()
	const token, channel, guild = "MTk5OTk5.HOOKS-discord-token-secret", "4001", "5001"
	dc := fakediscord.New(fakediscord.Options{Token: token, HeartbeatInterval: 200 * time.Millisecond})
	t.Cleanup(dc.Close)
	dc.GuildChannel(channel, guild)
	b := startIncidentBot(t, fmt.Sprintf(`discord: {token: ${DISCORD_BOT_TOKEN}, api_url: %q, allow: ["discord:500"]}`, dc.URL()), "discord:500", `["discord:`+channel+`"]`,
		"  - {name: alerts, format: alertmanager, secret: \"${HOOK_TOKEN}\", conversation: \"discord:"+channel+"\", prompt: An alert changed state., events: [firing, resolved]}\n",
		"DISCORD_BOT_TOKEN="+token)
	model := b.model
	testutil.WaitFor(t, "the slash commands registered", func() bool { return len(dc.Commands("")) == 3 })
	t.Cleanup(func() {
		if t.Failed() {
			for _, m := range dc.Sent() {
				t.Logf("discord %s: %q", m.ChannelID, m.Content)
			}
		}
	})
	inThread := func(thread, text string) func() bool {
		return func() bool {
			for _, m := range dc.Messages(thread) {
				if strings.Contains(m.Content, text) {
					return true
				}
			}
			return false
		}
	}

	if got := postHook(t, b, "alerts", hookSecret, alertBody("firing", "aaa")); got != http.StatusAccepted {
		t.Fatalf("first delivery: %d; want 202", got)
	}
	testutil.WaitFor(t, "the incident's thread", func() bool { return len(dc.Threads()) == 1 })
	th := dc.Threads()[0]
	parents := dc.Messages(channel)
	if len(parents) != 1 || parents[0].ID != th.ID || !strings.Contains(parents[0].Content, "firing: DiskFull") {
		t.Fatalf("the channel has %+v; want one headline, the thread's first message", parents)
	}
	if th.ParentID != channel || th.GuildID != guild || !strings.Contains(th.Name, "firing: DiskFull") {
		t.Errorf("thread %+v", th)
	}
	testutil.WaitFor(t, "the turn's reply in the thread", inThread(th.ID, "MODEL: looked into it"))

	// A person in the thread, without a mention: the bot takes it, in the
	// thread's conversation, and its held call is approved there.
	dc.InjectMessage(fakediscord.Message{ChannelID: th.ID, GuildID: guild, Author: fakediscord.User{ID: "500", Username: "oncall"}, Content: "please clean up"})
	var req fakediscord.Sent
	testutil.WaitFor(t, "the approval request in the thread", func() bool {
		for _, m := range dc.Messages(th.ID) {
			if len(fakediscord.Buttons(m.Components)) > 0 {
				req = m
				return true
			}
		}
		return false
	})
	var approve string
	for _, bt := range fakediscord.Buttons(req.Components) {
		if bt.Label == "Approve" {
			approve = bt.CustomID
		}
	}
	dc.InjectButtonPress(fakediscord.Press{ChannelID: th.ID, GuildID: guild, MessageID: req.ID, User: fakediscord.User{ID: "500", Username: "oncall"}, CustomID: approve})
	testutil.WaitFor(t, "the approved call's end in the thread", inThread(th.ID, "MODEL: the cleanup ran."))

	if got := postHook(t, b, "alerts", hookSecret, alertBody("firing", "aaa", "bbb")); got != http.StatusAccepted {
		t.Fatalf("later delivery: %d; want 202", got)
	}
	testutil.WaitFor(t, "the later delivery's turn", func() bool { return strings.Contains(lastUser(model), "db-bbb") })
	if r := lastRequest(model); !history(r, "please clean up") || !history(r, "db-aaa") {
		t.Errorf("the later delivery's turn lacks the thread's history: %d messages", len(r.Messages))
	}
	for i, r := range model.Requests() {
		if !profiled(r) {
			t.Errorf("model request %d lacks the channel's profile: the thread is not of its conversation", i)
		}
	}
	if log := b.p.stderr.String(); !strings.Contains(log, `"conv":"discord:`+channel+`:`+th.ID+`"`) {
		t.Errorf("the incident's conversation is not discord:%s:%s", channel, th.ID)
	}
	if got := postHook(t, b, "alerts", hookSecret, alertBody("resolved", "aaa", "bbb")); got != http.StatusAccepted {
		t.Fatalf("resolution: %d; want 202", got)
	}
	testutil.WaitFor(t, "the resolution's turn", func() bool { return strings.Contains(lastUser(model), "resolved") })
	testutil.WaitFor(t, "its reply in the thread", func() bool {
		n := 0
		for _, m := range dc.Messages(th.ID) {
			if strings.Contains(m.Content, "MODEL: looked into it") {
				n++
			}
		}
		return n == 3
	})
	if n := len(dc.Threads()); n != 1 {
		t.Errorf("threads %d; want 1 for the incident", n)
	}
	if n := len(dc.Messages(channel)); n != 1 {
		t.Errorf("messages in the channel %d; want 1 (everything else in the thread)", n)
	}
}

// startIncidentBot is the binary with one gateway (its YAML line below
// gateways:, with an allow list of approver), approver in hitl.approvers,
// shell held for approval, threadModel as the model, the profile "ops"
// (system prompt opsPrompt) for the conversations match (a YAML list) and
// the webhooks hooks (a YAML list) on its http.listen; env adds to its
// environment.
func startIncidentBot(t *testing.T, gateway, approver, match, hooks string, env ...string) *webhookBot {
	t.Helper()
	b := &webhookBot{model: startFake(t, threadModel), listen: freeAddr(t), dir: t.TempDir()}
	b.model.Record(true)
	b.config = fmt.Sprintf(`llm:
  providers: [{name: fake, base_url: %s, api_key: sk-unused, model: fake-model}]
gateways:
  console: {enabled: false}
  %s
hitl: {approvers: [%q]}
policy:
  rules:
%s
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: %q}
log: {level: debug, format: json}
profiles:
  - {name: ops, match: %s, system_prompt: %q}
webhooks:
%s`, b.model.URL(), gateway, approver, shellApprove, filepath.Join(b.dir, "ws"), filepath.Join(b.dir, "gatehouse.db"), b.listen, match, opsPrompt, hooks)
	writeFile(t, b.dir, "config.yaml", b.config)
	b.p = startBot(t, b.dir, baseEnv(b.dir, append(env, "HOOK_TOKEN="+hookSecret)...))
	waitListen(t, b.listen)
	return b
}

// opsPrompt is the system prompt of the incident bots' profile "ops".
const opsPrompt = "OPS-PROFILE: you are on call for these systems."

// profiled reports whether a model request has the profile's system prompt.
func profiled(r fakeopenai.Request) bool {
	return len(r.Messages) > 0 && r.Messages[0].Role == "system" && strings.Contains(r.Messages[0].Content, "OPS-PROFILE")
}

// lastRequest returns the model's last request.
func lastRequest(m *fakeopenai.Server) fakeopenai.Request {
	reqs := m.Requests()
	if len(reqs) == 0 {
		return fakeopenai.Request{}
	}
	return reqs[len(reqs)-1]
}

// lastUser returns the last user message of the model's last request.
func lastUser(m *fakeopenai.Server) string { return lastRequest(m).LastUser() }
