package main

import (
	"strings"
	"syscall"
	"testing"

	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// peopleConfig is the shipped configuration, offline, with Slack on the
// fake at url, self-approval off, console:local and slack:U0AAA approvers
// and one person, and slack:U0BBB another approver.
func peopleConfig(t *testing.T, url string) string {
	t.Helper()
	cfg := offlineConfig(t)
	for _, r := range [][2]string{
		{"api_url: https://slack.com/api/", "api_url: " + url + "/api/"},
		{"approvers: [console:local]", "approvers: [console:local, slack:U0AAA, slack:U0BBB]\n  people: [[console:local, slack:U0AAA]]"},
		{"allow_self_approval: true", "allow_self_approval: false"},
	} {
		if !strings.Contains(cfg, r[0]) {
			t.Fatalf("the shipped config.yaml no longer has %q; update this test", r[0])
		}
		cfg = strings.Replace(cfg, r[0], r[1], 1)
	}
	return cfg
}

// TestFourEyesPerPerson is issue 21 item 7 through the binary: with
// allow_self_approval false, a request asked for on the console is not
// approved from Slack by the same person (console:local and slack:U0AAA
// are one person in hitl.people); another person's /approve runs it.
func TestFourEyesPerPerson(t *testing.T) {
	t.Parallel()
	const bot, app = "xoxb-1-PEOPLE-slack-bot-token", "xapp-1-A0FAKE-PEOPLE-slack-app-token"
	sl := fakeslack.New(fakeslack.Options{BotToken: bot, AppToken: app})
	t.Cleanup(sl.Close)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", peopleConfig(t, sl.URL()))
	p := startBot(t, dir, baseEnv(dir, "SLACK_BOT_TOKEN="+bot, "SLACK_APP_TOKEN="+app))
	testutil.WaitFor(t, "the socket mode connection", func() bool { return sl.Connections() > 0 })

	p.send("run `echo four-eyes`")
	token := expectToken(t, p)
	sl.InjectDM("U0AAA", "/approve "+token)
	dm := fakeslack.DMChannel("U0AAA")
	refusal := func() bool {
		for _, post := range sl.Posts(dm) {
			if strings.Contains(post.Text, "another approver must approve it") {
				return true
			}
		}
		return false
	}
	testutil.WaitFor(t, "the refusal of the same person's /approve in Slack", refusal)
	if strings.Contains(p.stdout(), "Approved by") {
		t.Fatalf("the same person approved their own request from Slack:\n%s", p.stdout())
	}

	sl.InjectDM("U0BBB", "/approve "+token)
	expectLine(t, p, "Approved by slack:U0BBB")
	// The Slack gateway keeps the bot running once the console's input
	// ends: stop it as a service manager would.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; want 0", code)
	}
}
