package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// inboxConfig runs Telegram against the fake, the fake model at llmURL,
// on the PostgreSQL database dsn as instance name, with a short lease ttl;
// Telegram users 41 to 44 may talk to it.
func inboxConfig(dir, name, dsn, llmURL string, tg *faketg.Server, concurrency int) string {
	return fmt.Sprintf(`llm:
  providers:
    - name: fake
      base_url: %s
      api_key: "sk-fake-0123456789"
      model: fake-model
  timeout: 60s
gateways:
  console: {enabled: false}
  telegram: {token: %q, api_url: %q, allow: ["41", "42", "43", "44"]}
hitl: {approvers: ["telegram:41"]}
engine: {concurrency: %d}
tools: {workspace: %q}
store:
  driver: postgres
  dsn: %q
  lease_ttl: 2s
  instance: %s
http: {listen: ""}
log: {level: debug, format: json}
`, llmURL, tg.Token(), tg.URL(), concurrency, filepath.Join(dir, "ws"), dsn, name)
}

// TestInboxSurvivesTheKillOfThePoller: two real bots on one PostgreSQL
// database and the fake Telegram. Instance a holds the Telegram poll
// lease; a burst of messages in four chats is taken in and claimed by both
// instances while the model holds every answer back; a is SIGKILLed in the
// middle of its turns, and the rest of the burst arrives. Instance b takes
// over the poll lease and a's turns after store.lease_ttl: every message
// is answered exactly once (the fake's sendMessage counted per message),
// and the inbox ends with nothing pending.
func TestInboxSurvivesTheKillOfThePoller(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	tg := startTelegram(t)
	gate := make(chan struct{})
	var waiting atomic.Int32
	llm := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		waiting.Add(1)
		defer waiting.Add(-1)
		select {
		case <-gate:
		case <-time.After(2 * hangGuard):
		}
		return fakeopenai.Text("answer to " + r.LastUser())
	})
	dirA, dirB := t.TempDir(), t.TempDir()
	writeFile(t, dirA, "config.yaml", inboxConfig(dirA, "a", dsn, llm.URL(), tg, 8))
	// b runs one turn at a time: a is sure to hold turns when it dies.
	writeFile(t, dirB, "config.yaml", inboxConfig(dirB, "b", dsn, llm.URL(), tg, 1))
	a := startBot(t, dirA, baseEnv(dirA))
	testutil.WaitFor(t, "instance a polling Telegram", func() bool { return len(tg.Polls()) > 0 })
	startBot(t, dirB, baseEnv(dirB))

	db, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	count := func(query string) int {
		t.Helper()
		var n int
		if err := db.QueryRow(context.Background(), query).Scan(&n); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return n
	}

	const total = 24
	inject := func(from, to int) {
		for i := from; i < to; i++ {
			user := faketg.User{ID: int64(41 + i%4), FirstName: "U"}
			tg.InjectMessage(faketg.Message{From: &user, Chat: faketg.Chat{ID: user.ID, Type: "private"}, Text: fmt.Sprintf("msg-%d", i)})
		}
	}
	inject(0, total/2)
	testutil.WaitFor(t, "the four conversations' turns waiting on the model, some of them a's", func() bool {
		return waiting.Load() == 4 && count(`SELECT count(*) FROM inbox WHERE holder = 'a' AND claimed = 1 AND done = 0`) > 0
	})
	if err := syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.done
	inject(total/2, total)
	close(gate)

	answers := func() map[string]int {
		n := map[string]int{}
		for _, s := range tg.Sent() {
			if s.Method == "sendMessage" {
				n[s.Plain]++
			}
		}
		return n
	}
	testutil.WaitFor(t, "every message answered", func() bool {
		got := answers()
		for i := range total {
			if got[fmt.Sprintf("answer to msg-%d", i)] == 0 {
				return false
			}
		}
		return true
	})
	testutil.WaitFor(t, "the inbox with nothing pending", func() bool {
		return count(`SELECT count(*) FROM inbox WHERE done = 0`) == 0
	})
	got := answers()
	var wrong []string
	for text, n := range got {
		if n != 1 || !strings.HasPrefix(text, "answer to msg-") {
			wrong = append(wrong, fmt.Sprintf("%q ×%d", text, n))
		}
	}
	if len(wrong) > 0 || len(got) != total {
		t.Fatalf("sent %d distinct messages; want %d answers, each once; wrong: %v", len(got), total, wrong)
	}
	if n := count(`SELECT count(*) FROM inbox`); n != total {
		t.Fatalf("inbox has %d entries; want %d, one per message", n, total)
	}
}
