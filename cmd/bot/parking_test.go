package main

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestBurstSurvivesAKillOnSQLite: on SQLite, more Telegram messages are in
// progress at once than the gateway may hold back from Telegram (one turn
// at a time, and the model answers none yet), so the oldest are confirmed
// to Telegram while in progress, parked in the store first. The bot is
// killed (SIGKILL) and started again: every message is answered, each
// exactly once (the parked ones from the store, the rest from Telegram).
func TestBurstSurvivesAKillOnSQLite(t *testing.T) {
	t.Parallel()
	tg := startTelegram(t)
	gate := make(chan struct{})
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	llm := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		<-gate
		return fakeopenai.Text("answer to " + r.LastUser())
	})
	t.Cleanup(release) // before the fake's Close: no request stays held
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fmt.Sprintf(`llm:
  providers:
    - {name: fake, base_url: %q, api_key: "sk-fake-0123456789", model: fake-model}
gateways:
  console: {enabled: false}
  telegram: {token: %q, api_url: %q, allow: ["*"]}
hitl: {approvers: ["telegram:1"]}
engine: {concurrency: 1}
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: ""}
log: {level: debug, format: json}
`, llm.URL(), tg.Token(), tg.URL(), filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db")))

	first := startBot(t, dir, baseEnv(dir))
	const total = 100
	for i := range total {
		user := faketg.User{ID: int64(1000 + i), FirstName: "U"}
		tg.InjectMessage(faketg.Message{From: &user, Chat: faketg.Chat{ID: user.ID, Type: "private"}, Text: fmt.Sprintf("msg-%d", i)})
	}
	// Telegram forgets an update once a poll's offset passes it, and the
	// gateway polls again only after parking what it passed.
	testutil.WaitFor(t, "updates confirmed to Telegram while in progress", func() bool { return tg.Pending() < total })
	first.kill9()
	release()

	startBot(t, dir, baseEnv(dir))
	answers := func() map[string]int { return sentTexts(tg) }
	testutil.WaitFor(t, "every message answered", func() bool {
		got := answers()
		for i := range total {
			if got[fmt.Sprintf("answer to msg-%d", i)] == 0 {
				return false
			}
		}
		return true
	})
	testutil.WaitFor(t, "every update confirmed", func() bool { return tg.Pending() == 0 })
	for text, n := range answers() {
		if n != 1 {
			t.Errorf("%q sent %d times; want once", text, n)
		}
	}
}
