package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestWhoAmI: /whoami tells anyone who writes it their identity, and
// nothing else: a stranger (not on the allow list) gets it before the allow
// list instead of the refusal, and nothing of theirs reaches the model or
// the history; an allowed user gets it too, and /help lists it. A
// stranger's other messages are still refused as before.
func TestWhoAmI(t *testing.T) {
	t.Parallel()
	llm := startFake(t, func(fakeopenai.Request) fakeopenai.Step { return fakeopenai.Text("MODEL: ok.") })
	tg := faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	t.Cleanup(tg.Close)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fmt.Sprintf(`llm:
  providers:
    - {name: fake, base_url: %q, api_key: sk-whoami-test, model: fake-model}
gateways:
  console: {enabled: false}
  telegram: {token: %q, api_url: %q, allow: ["42"]}
hitl: {approvers: ["telegram:42"]}
tools: {workspace: ./workspace}
store: {dsn: gatehouse.db}
http: {listen: ""}
`, llm.URL(), tg.Token(), tg.URL()))
	startBot(t, dir, baseEnv(dir))

	say := func(from int64, text string) {
		u := faketg.User{ID: from, FirstName: "U"}
		tg.InjectMessage(faketg.Message{From: &u, Chat: faketg.Chat{ID: from, Type: "private"}, Text: text})
	}
	// waitSent waits for the n-th message the bot sent and returns it.
	waitSent := func(n int) faketg.Sent {
		t.Helper()
		testutil.WaitFor(t, fmt.Sprintf("%d messages sent", n), func() bool { return len(tg.Sent()) >= n })
		return tg.Sent()[n-1]
	}

	say(501, "/whoami")
	if got := waitSent(1); got.ChatID != 501 || got.Plain != "Your identity is telegram:501." {
		t.Errorf("a stranger's /whoami was answered %q in chat %d; want only %q", got.Plain, got.ChatID, "Your identity is telegram:501.")
	}
	say(501, "hello, model")
	if got := waitSent(2); !strings.Contains(got.Plain, "allow list") {
		t.Errorf("a stranger's message after /whoami was answered %q; want the refusal", got.Plain)
	}

	say(42, "/whoami")
	if got := waitSent(3); got.ChatID != 42 || got.Plain != "Your identity is telegram:42." {
		t.Errorf("an allowed user's /whoami was answered %q; want %q", got.Plain, "Your identity is telegram:42.")
	}
	say(42, "/help")
	if got := waitSent(4); !strings.Contains(got.Plain, "/whoami") {
		t.Errorf("/help does not list /whoami:\n%s", got.Plain)
	}
	if n := len(llm.Requests()); n != 0 {
		t.Errorf("%d requests reached the model; /whoami and a stranger's message must not", n)
	}
	say(42, "hello, model")
	testutil.WaitFor(t, "the allowed user's message answered by the model", func() bool { return len(llm.Requests()) == 1 })
	var users []string
	for _, m := range llm.Requests()[0].Messages {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if len(users) != 1 || users[0] != "hello, model" {
		t.Errorf("the model saw the user messages %q; want only the allowed user's %q (no /whoami, nothing of the stranger's)", users, "hello, model")
	}
}
