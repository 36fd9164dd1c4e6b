package main

import (
	"strings"
	"syscall"
	"testing"

	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestSlackThreadSurvivesRestart is issue 21 item 6 through the binary: a
// thread an allowed user started with a mention is remembered in the
// store, so after a restart the user's reply there without a mention is
// still answered, without asking Slack (conversations.replies fails here).
func TestSlackThreadSurvivesRestart(t *testing.T) {
	t.Parallel()
	const bot, app = "xoxb-1-THREAD-slack-bot-token", "xapp-1-A0FAKE-THREAD-slack-app-token"
	sl := fakeslack.New(fakeslack.Options{BotToken: bot, AppToken: app})
	t.Cleanup(sl.Close)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", slackHealthConfig(dir, sl.URL(), ""))
	env := baseEnv(dir, "SLACK_BOT_TOKEN="+bot, "SLACK_APP_TOKEN="+app)
	answers := func(thread string) int {
		n := 0
		for _, p := range sl.Posts("C1") {
			if p.ThreadTS == thread {
				n++
			}
		}
		return n
	}
	stop := func(p *botProc) {
		t.Helper()
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(); code != 0 {
			t.Fatalf("exit %d; want 0", code)
		}
	}

	p := startBot(t, dir, env)
	testutil.WaitFor(t, "the socket mode connection", func() bool { return sl.Connections() == 1 })
	ts := sl.InjectMention("C1", "U1", "hello", "")
	testutil.WaitFor(t, "the answer in the thread", func() bool { return answers(ts) == 1 })
	stop(p)

	sl.FailNext("conversations.replies", 100, fakeslack.FaultServer)
	p = startBot(t, dir, env)
	testutil.WaitFor(t, "the socket mode connection after the restart", func() bool { return sl.Connections() == 2 })
	sl.InjectMessage(fakeslack.Event{Channel: "C1", User: "U1", Text: "hello again", ThreadTS: ts})
	testutil.WaitFor(t, "the answer to the reply without a mention after the restart", func() bool { return answers(ts) == 2 })
	if n := sl.Calls("conversations.replies"); n != 0 {
		t.Errorf("conversations.replies called %d times; want none (the store remembers the thread)", n)
	}
	stop(p)
	if out := p.stderr.String(); strings.Contains(out, bot) || strings.Contains(out, app) {
		t.Errorf("a token in the log:\n%s", out)
	}
}
