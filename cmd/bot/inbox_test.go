package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// inboxConfig runs Telegram against the fake, the fake model at llmURL,
// on the PostgreSQL database dsn as instance name, with a short lease ttl;
// Telegram users 41 to 44 may talk to it.
func inboxConfig(dir, name, dsn, llmURL string, tg *faketg.Server) string {
	return inboxConfigN(dir, name, dsn, llmURL, tg, 8)
}

// inboxConfigN is inboxConfig with engine.concurrency turns at once.
func inboxConfigN(dir, name, dsn, llmURL string, tg *faketg.Server, concurrency int) string {
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
// database and the fake Telegram. Instance a alone holds the Telegram poll
// lease and takes in the first half of a burst of messages in four chats:
// the model answers three chats at once and holds the fourth's answer
// back, so a dies (SIGKILL) in the middle of that chat's turn, after it
// answered the others. Instance b, started meanwhile, takes over the poll
// lease and a's turn after store.lease_ttl, and the rest of the burst
// arrives: every message is answered exactly once (the fake's sendMessage
// counted per message), none twice because a had not stored its Telegram
// position, and the inbox ends with nothing pending.
func TestInboxSurvivesTheKillOfThePoller(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	tg := startTelegram(t)
	gate := make(chan struct{})
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	var waiting atomic.Int32
	const slowUser = 41
	llm := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		if n, _ := strconv.Atoi(strings.TrimPrefix(r.LastUser(), "msg-")); n%4 == 0 { // user 41's
			waiting.Add(1)
			<-gate
			waiting.Add(-1)
		}
		return fakeopenai.Text("answer to " + r.LastUser())
	})
	t.Cleanup(release) // runs before the fake's Close: no request stays held
	dirA, dirB := t.TempDir(), t.TempDir()
	writeFile(t, dirA, "config.yaml", inboxConfig(dirA, "a", dsn, llm.URL(), tg))
	writeFile(t, dirB, "config.yaml", inboxConfig(dirB, "b", dsn, llm.URL(), tg))
	a := startBot(t, dirA, baseEnv(dirA))
	testutil.WaitFor(t, "instance a polling Telegram", func() bool { return len(tg.Polls()) > 0 })

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
	answers := func() map[string]int { return sentTexts(tg) }
	answered := func(from, to int, slow bool) func() bool {
		return func() bool {
			got := answers()
			for i := from; i < to; i++ {
				if (slow || i%4 != 0) && got[fmt.Sprintf("answer to msg-%d", i)] == 0 {
					return false
				}
			}
			return true
		}
	}

	const total = 24
	inject := func(from, to int) {
		for i := from; i < to; i++ {
			user := faketg.User{ID: int64(slowUser + i%4), FirstName: "U"}
			tg.InjectMessage(faketg.Message{From: &user, Chat: faketg.Chat{ID: user.ID, Type: "private"}, Text: fmt.Sprintf("msg-%d", i)})
		}
	}
	inject(0, total/2)
	testutil.WaitFor(t, "a answering three chats while the fourth's turn waits on the model", func() bool {
		return waiting.Load() == 1 && answered(0, total/2, false)()
	})
	startBot(t, dirB, baseEnv(dirB))
	testutil.WaitFor(t, "instance b up", func() bool {
		return count(`SELECT count(*) FROM instances WHERE name = 'b'`) == 1
	})
	if err := syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.done
	inject(total/2, total)
	release()

	testutil.WaitFor(t, "every message answered", answered(0, total, true))
	twice := func() []string {
		var out []string
		for text, n := range answers() {
			if n != 1 || !strings.HasPrefix(text, "answer to msg-") {
				out = append(out, fmt.Sprintf("%q ×%d", text, n))
			}
		}
		return out
	}
	if w := twice(); len(w) > 0 {
		t.Fatalf("answered more than once: %v", w)
	}
	testutil.WaitFor(t, "the inbox with nothing pending", func() bool {
		return count(`SELECT count(*) FROM inbox WHERE done = 0`) == 0
	})
	if w, n := twice(), len(answers()); len(w) > 0 || n != total {
		t.Fatalf("sent %d distinct messages; want %d answers, each once; wrong: %v", n, total, w)
	}
	if n := count(`SELECT count(*) FROM inbox`); n != total {
		t.Fatalf("inbox has %d entries; want %d, one per message", n, total)
	}
}

// TestInboxAnyInstanceRunsTheTurn: two real bots, one turn at a time
// each, on one database; a alone polls Telegram. While one chat's turn
// waits on the model (on whichever instance claimed it), the messages of
// three other chats are answered by the other instance: a received
// message's turn runs on any instance, not only on the one that received
// it. /cancel, received by a, stops the slow turn wherever it runs: its
// answer is never sent. Each message is answered once.
func TestInboxAnyInstanceRunsTheTurn(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	tg := startTelegram(t)
	gate := make(chan struct{})
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	var waiting atomic.Int32
	llm := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		if r.LastUser() == "slow" {
			waiting.Add(1)
			<-gate
			waiting.Add(-1)
		}
		return fakeopenai.Text("answer to " + r.LastUser())
	})
	t.Cleanup(release) // runs before the fake's Close: no request stays held
	dirA, dirB := t.TempDir(), t.TempDir()
	writeFile(t, dirA, "config.yaml", inboxConfigN(dirA, "a", dsn, llm.URL(), tg, 1))
	writeFile(t, dirB, "config.yaml", inboxConfigN(dirB, "b", dsn, llm.URL(), tg, 1))
	startBot(t, dirA, baseEnv(dirA))
	testutil.WaitFor(t, "instance a polling Telegram", func() bool { return len(tg.Polls()) > 0 })
	startBot(t, dirB, baseEnv(dirB))

	say := func(user int64, text string) {
		u := faketg.User{ID: user, FirstName: "U"}
		tg.InjectMessage(faketg.Message{From: &u, Chat: faketg.Chat{ID: user, Type: "private"}, Text: text})
	}
	say(41, "slow")
	testutil.WaitFor(t, "the slow turn waiting on the model", func() bool { return waiting.Load() == 1 })
	var want []string
	for i := range 9 {
		text := fmt.Sprintf("quick-%d", i)
		say(int64(42+i%3), text)
		want = append(want, "answer to "+text)
	}
	answers := func() map[string]int { return sentTexts(tg) }
	testutil.WaitFor(t, "the other chats answered while the slow turn holds its instance", func() bool {
		got := answers()
		for _, w := range want {
			if got[w] == 0 {
				return false
			}
		}
		return waiting.Load() == 1
	})
	// /cancel reaches the slow turn wherever it runs (a receives it).
	say(41, "/cancel")
	testutil.WaitFor(t, "/cancel answered", func() bool {
		for text := range answers() {
			if strings.HasPrefix(text, "Cancelled the turn in progress") {
				return true
			}
		}
		return false
	})
	release()
	say(41, "after")
	testutil.WaitFor(t, "the next message of the chat answered", func() bool { return answers()["answer to after"] > 0 })
	for text, n := range answers() {
		if n != 1 || text == "answer to slow" {
			t.Errorf("%q sent %d times; want once, and the cancelled turn's answer never", text, n)
		}
	}
}
