package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// pacingSecret is the webhook secret token of the pacing tests' bots.
const pacingSecret = "pacing-webhook-secret"

// pacedBot is one instance of a cluster sharing a PostgreSQL database: a
// real bot binary with Telegram in webhook mode (a receiver every instance
// runs), its webhook served on its own http.listen.
type pacedBot struct {
	name, addr string
	proc       *botProc
}

// startPacedBots starts one bot per name on the database dsn names, all
// with one Telegram token on the fake tg and the model on llm.
func startPacedBots(t *testing.T, dsn string, tg *faketg.Server, llm *fakeopenai.Server, names ...string) []*pacedBot {
	t.Helper()
	var bots []*pacedBot
	for _, name := range names {
		addr := freeAddr(t)
		dir := t.TempDir()
		writeFile(t, dir, "config.yaml", fmt.Sprintf(`llm:
  providers:
    - {name: fake, base_url: %q, api_key: "sk-fake", model: fake-model}
gateways:
  console: {enabled: false}
  telegram:
    token: %q
    api_url: %q
    mode: webhook
    webhook: {public_url: "http://%s/tg", secret_token: %q}
    allow: ["*"]
hitl: {approvers: ["telegram:1"]}
tools: {workspace: ./workspace}
store: {driver: postgres, dsn: "${GATEHOUSE_DSN}", lease_ttl: 3s, instance: %q}
http: {listen: %q}
log: {level: info, format: json}
`, llm.URL(), tg.Token(), tg.URL(), addr, pacingSecret, name, addr))
		bots = append(bots, &pacedBot{name: name, addr: addr, proc: startBot(t, dir, baseEnv(dir, "GATEHOUSE_DSN="+dsn))})
	}
	for _, b := range bots {
		testutil.WaitFor(t, b.name+" serving its webhook", func() bool { return b.post(t, 0, 0, "") == http.StatusOK })
	}
	return bots
}

// post hands the bot an update from user (in the private chat of the same
// id) through its webhook as Telegram would, and returns the status; 0
// when the bot does not answer. A zero id posts an update with nothing in
// it (the bot acknowledges it and does nothing).
func (b *pacedBot) post(t *testing.T, id int, user int64, text string) int {
	t.Helper()
	body := `{"update_id":1}`
	if id != 0 {
		body = fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"date":%d,"from":{"id":%d,"is_bot":false,"first_name":"U"},"chat":{"id":%d,"type":"private"},"text":%q}}`,
			id, id, time.Now().Unix(), user, user, text)
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+b.addr+"/tg", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", pacingSecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// sentMessages are the fake's sendMessage records.
func sentMessages(tg *faketg.Server) []faketg.Sent {
	var out []faketg.Sent
	for _, s := range tg.Sent() {
		if s.Method == "sendMessage" {
			out = append(out, s)
		}
	}
	return out
}

// TestTwoInstancesKeepTelegramsLimits: two bots on one database, one bot
// token, each answering messages that reach it through its own webhook:
// Telegram sees no more than one message a second in one chat and no more
// than 30 a second from the bot in all, counting both instances together,
// as the fake's receive times show.
func TestTwoInstancesKeepTelegramsLimits(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	tg := faketg.New(faketg.Options{})
	t.Cleanup(tg.Close)
	llm := startFake(t, func(fakeopenai.Request) fakeopenai.Step { return fakeopenai.Text("MODEL: ok.") })
	bots := startPacedBots(t, dsn, tg, llm, "alpha", "beta")

	// Six messages in one chat, three to each instance; and 35 chats
	// more through each instance at once.
	const oneChat = 4242
	var wg sync.WaitGroup
	id := 100
	for i := range 6 {
		b := bots[i%2]
		id++
		uid := id
		wg.Go(func() {
			if code := b.post(t, uid, oneChat, fmt.Sprint("hello ", uid)); code != http.StatusOK {
				t.Errorf("%s: update %d answered %d", b.name, uid, code)
			}
		})
	}
	chats := 0
	for _, b := range bots {
		for range 35 {
			id++
			chats++
			uid, user := id, int64(5000+chats)
			wg.Go(func() {
				if code := b.post(t, uid, user, "hello"); code != http.StatusOK {
					t.Errorf("%s: update %d answered %d", b.name, uid, code)
				}
			})
		}
	}
	wg.Wait()
	want := 6 + chats
	testutil.WaitFor(t, fmt.Sprintf("%d replies", want), func() bool { return len(sentMessages(tg)) >= want })

	var all, one []time.Time
	perChat := map[int64][]time.Time{}
	for _, s := range sentMessages(tg) {
		all = append(all, s.At)
		perChat[s.ChatID] = append(perChat[s.ChatID], s.At)
		if s.ChatID == oneChat {
			one = append(one, s.At)
		}
	}
	if len(all) != want || len(one) != 6 {
		t.Fatalf("%d replies, %d of them in chat %d; want %d and 6", len(all), len(one), oneChat, want)
	}
	for chat, times := range perChat {
		if n := gatewaytest.MostInWindow(times, time.Second); n > 1 {
			t.Errorf("chat %d: %d messages in one second; Telegram allows 1", chat, n)
		}
	}
	if n := gatewaytest.MostInWindow(all, time.Second); n > 30 {
		t.Errorf("%d messages from the bot in one second; Telegram allows 30", n)
		// The timeline, for what bunched the replies (either instance may
		// run any chat's turn: the durable inbox).
		sent := slices.SortedFunc(slices.Values(sentMessages(tg)), func(a, b faketg.Sent) int { return a.At.Compare(b.At) })
		var b strings.Builder
		for _, s := range sent {
			fmt.Fprintf(&b, "%8.1f ms  chat %d\n", float64(s.At.Sub(sent[0].At).Microseconds())/1000, s.ChatID)
		}
		t.Logf("the replies as the fake received them:\n%s", b.String())
	}
	for _, b := range bots {
		gatewaytest.NoSecrets(t, b.proc.stderr.String(), tg.Token())
	}
}

// TestReplyOfAKilledInstanceIsSent: an instance writes its reply and is
// killed (SIGKILL) while Telegram has not yet taken it (the request hangs);
// another instance on the database sends it, once, after store.lease_ttl.
func TestReplyOfAKilledInstanceIsSent(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	tg := faketg.New(faketg.Options{})
	t.Cleanup(tg.Close)
	llm := startFake(t, func(fakeopenai.Request) fakeopenai.Step { return fakeopenai.Text("MODEL: the answer, composed once.") })
	bots := startPacedBots(t, dsn, tg, llm, "a", "b")
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())

	tg.FailNext("sendMessage", 1, faketg.FaultHang)
	const chat = 9001
	if code := bots[0].post(t, 7, chat, "a question"); code != http.StatusOK {
		t.Fatalf("a: update answered %d", code)
	}
	testutil.WaitFor(t, "the composer's reply sent and hanging", func() bool { return tg.Calls("sendMessage") >= 1 })
	// Either instance may run the turn (the durable inbox): the composer
	// is the one whose name its outbox row carries.
	var composed string
	testutil.WaitFor(t, "the reply in the outbox", func() bool {
		return conn.QueryRow(context.Background(), `SELECT composer FROM outbox WHERE chat = $1`, fmt.Sprint(chat)).Scan(&composed) == nil
	})
	composer, survivor := bots[0], bots[1]
	if composed == survivor.name {
		composer, survivor = survivor, composer
	}
	composer.proc.kill9()

	testutil.WaitFor(t, "the reply sent by the survivor", func() bool { return len(sentMessages(tg)) >= 1 })
	// Once sent, it is marked so in the outbox: no instance sends it again.
	var state, sender string
	testutil.WaitFor(t, "the reply marked sent", func() bool {
		err := conn.QueryRow(context.Background(), `SELECT state, composer FROM outbox WHERE chat = $1`, fmt.Sprint(chat)).Scan(&state, &sender)
		return err == nil && state == "sent"
	})
	sent := sentMessages(tg)
	if len(sent) != 1 || sent[0].ChatID != chat || !strings.Contains(sent[0].Plain, "composed once") {
		t.Fatalf("sent %+v; want the composer's reply to chat %d, once", sent, chat)
	}
	if sender != survivor.name {
		t.Errorf("the reply was sent by %q; want the survivor, %s", sender, survivor.name)
	}
	if n := strings.Count(survivor.proc.stderr.String(), "sending a reply whose instance is gone"); n != 1 {
		t.Errorf("the survivor sent %d replies of the instance gone; want 1\n%s", n, survivor.proc.stderr.String())
	}
	gatewaytest.NoSecrets(t, survivor.proc.stderr.String(), tg.Token())
}
