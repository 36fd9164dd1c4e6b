package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// withNudges returns cfg (the shipped configuration, modified) with
// hitl.remind_after and hitl.escalate set to the YAML given.
func withNudges(t *testing.T, cfg, remind, escalate string) string {
	t.Helper()
	const key = "  allow_self_approval: true"
	if !strings.Contains(cfg, key) {
		t.Fatalf("the shipped config.yaml no longer has %q; update this test", key)
	}
	return strings.Replace(cfg, key, key+"\n  remind_after: "+remind+"\n  escalate: "+escalate+"\n ", 1)
}

// countLines counts the lines of out that contain sub.
func countLines(out, sub string) int {
	n := 0
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, sub) {
			n++
		}
	}
	return n
}

// TestEscalationThroughSlack is issue 30 item 2 through the binary: a
// shell call held on the console and answered by nobody is sent again
// once past hitl.remind_after, and past hitl.escalate[0].after reaches
// slack:U0ONCALL in a direct message Slack opens (conversations.open);
// U0ONCALL, on no allow list and no approver list, cannot approve it
// before it is escalated, and their chat is refused as a stranger's;
// once it is escalated they approve it from that direct message and it
// runs once.
func TestEscalationThroughSlack(t *testing.T) {
	t.Parallel()
	const bot, app = "xoxb-1-ESCALATE-slack-bot-token", "xapp-1-A0FAKE-ESCALATE-slack-app-token"
	sl := fakeslack.New(fakeslack.Options{BotToken: bot, AppToken: app})
	t.Cleanup(sl.Close)
	dir := t.TempDir()
	cfg := offlineConfig(t)
	const api = "api_url: https://slack.com/api/"
	if !strings.Contains(cfg, api) {
		t.Fatalf("the shipped config.yaml no longer has %q; update this test", api)
	}
	cfg = strings.Replace(cfg, api, "api_url: "+sl.URL()+"/api/", 1)
	writeFile(t, dir, "config.yaml", withNudges(t, cfg, "2s", "[{after: 6s, approvers: [slack:U0ONCALL]}]"))
	runs := filepath.Join(dir, "workspace", "runs.txt")
	p := startBot(t, dir, baseEnv(dir, "SLACK_BOT_TOKEN="+bot, "SLACK_APP_TOKEN="+app))
	testutil.WaitFor(t, "the socket mode connection", func() bool { return sl.Connections() > 0 })
	dm := fakeslack.DMChannel("U0ONCALL")
	posted := func(sub string) func() bool {
		return func() bool {
			for _, post := range sl.Posts(dm) {
				if strings.Contains(post.Text, sub) || strings.Contains(string(post.Blocks), sub) {
					return true
				}
			}
			return false
		}
	}

	p.send("run `echo escalated >> runs.txt`")
	token := expectToken(t, p)
	sl.InjectDM("U0ONCALL", "/approve "+token) // not escalated yet
	testutil.WaitFor(t, "the refusal of an /approve before the escalation", posted("Not authorised"))
	sl.InjectDM("U0ONCALL", "hello")
	testutil.WaitFor(t, "the stranger's refusal", posted("allow list"))

	expectLine(t, p, "Reminder: nobody has answered")
	expectLine(t, p, "escalated to slack:U0ONCALL")
	testutil.WaitFor(t, "the escalated request in U0ONCALL's direct message", posted("Escalated: nobody has answered"))
	if readFile(t, runs) != "" {
		t.Fatal("the held call ran before anybody approved it")
	}
	sl.InjectDM("U0ONCALL", "/approve "+token)
	expectLine(t, p, "Approved by slack:U0ONCALL")
	if got := readFile(t, runs); got != "escalated\n" {
		t.Errorf("runs.txt = %q; want the call run once", got)
	}
	if n := countLines(p.stdout(), "Reminder: nobody has answered"); n != 1 {
		t.Errorf("the console got %d reminders; want 1:\n%s", n, p.stdout())
	}
	if sl.Calls("conversations.open") == 0 {
		t.Error("no conversations.open: the direct message was not opened")
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; want 0", code)
	}
}

// TestReminderNotAgainAfterRestart: a reminder sent before a restart is
// not sent again by the restarted bot (SQLite), which goes on to take
// the escalation step when it is due.
func TestReminderNotAgainAfterRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", withNudges(t, offlineConfig(t), "1s", `[{after: 5s, notify: ["console:local"]}]`))
	p := startBot(t, dir, baseEnv(dir))
	p.send("run `echo never`")
	token := expectToken(t, p)
	expectLine(t, p, "Reminder: nobody has answered")
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d after end of input; want 0", code)
	}

	again := startBot(t, dir, baseEnv(dir))
	line := expectLine(t, again, "escalated to console:local")
	if !strings.Contains(line, token) {
		t.Errorf("escalation line %q does not name request %s", line, token)
	}
	if n := countLines(again.stdout(), "Reminder:"); n != 0 {
		t.Errorf("the restarted bot sent the reminder again:\n%s", again.stdout())
	}
	again.send("/pending")
	expectLine(t, again, "reminded, escalated")
	again.closeInput()
	if code := again.wait(); code != 0 {
		t.Fatalf("exit %d after end of input; want 0", code)
	}
}

// TestEscalationApproverOnADisabledGateway: an escalation approver on a
// gateway that is not enabled (telegram without a token) could never be
// reached: `bot` refuses the file with exit 2 naming the key, and `bot
// doctor` reports it.
func TestEscalationApproverOnADisabledGateway(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "bad.yaml", withNudges(t, offlineConfig(t), "0s", `[{after: 5m, approvers: [console:local, "telegram:777"]}]`))
	const key = "hitl.escalate[0].approvers[1]"
	r := runOnce(t, dir, baseEnv(dir), "", "-config", "bad.yaml")
	if r.code != exitConfig || !strings.Contains(r.stderr, key) || !strings.Contains(r.stderr, "not enabled") {
		t.Errorf("bot: exit %d, stderr %q; want %d naming %s", r.code, r.stderr, exitConfig, key)
	}
	r = runOnce(t, dir, baseEnv(dir), "", "doctor", "-config", "bad.yaml")
	if r.code != exitFail || !strings.Contains(r.stdout, key) {
		t.Errorf("bot doctor: exit %d\n%s", r.code, r.stdout)
	}
}
