package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// pairingCodeRe finds the pairing code in a stranger's reply.
var pairingCodeRe = regexp.MustCompile(`pairing code is ([A-Z2-9]{8})\b`)

// TestPairingThroughTheBinary: with gateways.telegram.pairing on, a
// stranger's Telegram direct message gets a pairing code (a stranger in a
// group gets the refusal, no code); the approver's /pair CODE on the
// console lets them in and they are told on Telegram; the pairing is
// audited and survives a restart; /pairs lists it and /unpair takes it
// back. Nothing the stranger sent while not paired is stored or reaches
// the model.
func TestPairingThroughTheBinary(t *testing.T) {
	t.Parallel()
	llm := startFake(t, func(fakeopenai.Request) fakeopenai.Step { return fakeopenai.Text("MODEL: hello, newcomer.") })
	tg := faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	t.Cleanup(tg.Close)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fmt.Sprintf(`llm:
  providers:
    - {name: fake, base_url: %q, api_key: sk-pairing-test, model: fake-model}
gateways:
  console: {enabled: true}
  telegram: {token: %q, api_url: %q, pairing: true, group: all}
hitl: {approvers: ["console:local"]}
tools: {workspace: ./workspace}
store: {dsn: gatehouse.db}
http: {listen: ""}
`, llm.URL(), tg.Token(), tg.URL()))
	say := func(from, chat int64, text string) {
		u := faketg.User{ID: from, FirstName: "S"}
		typ := "private"
		if chat != from {
			typ = "group"
		}
		tg.InjectMessage(faketg.Message{From: &u, Chat: faketg.Chat{ID: chat, Type: typ}, Text: text})
	}
	sentTo := func(chat int64) []string {
		var out []string
		for _, s := range tg.Sent() {
			if s.ChatID == chat && s.Method == "sendMessage" {
				out = append(out, s.Plain)
			}
		}
		return out
	}
	waitSentTo := func(chat int64, n int) string {
		t.Helper()
		testutil.WaitFor(t, fmt.Sprintf("%d messages to chat %d", n, chat), func() bool { return len(sentTo(chat)) >= n })
		return sentTo(chat)[n-1]
	}

	p := startBot(t, dir, baseEnv(dir))
	say(4242, 4242, "hello from a stranger")
	m := pairingCodeRe.FindStringSubmatch(waitSentTo(4242, 1))
	if m == nil {
		t.Fatalf("the stranger's direct message was answered %q; want a pairing code", sentTo(4242)[0])
	}
	code := m[1]
	say(777, -100123, "a stranger in a group")
	if got := waitSentTo(-100123, 1); pairingCodeRe.MatchString(got) || !strings.Contains(got, "allow list") {
		t.Errorf("a stranger in a group was answered %q; want the refusal and no code", got)
	}

	p.send("/pair ABCDEFGH")
	expectLine(t, p, "wrong or has expired")
	p.send("/pair " + code)
	expectLine(t, p, "Paired telegram:4242")
	if got := waitSentTo(4242, 2); !strings.Contains(got, "you can talk to me now") {
		t.Errorf("the newcomer was told %q", got)
	}
	say(4242, 4242, "first words as a paired newcomer")
	if got := waitSentTo(4242, 3); got != "MODEL: hello, newcomer." {
		t.Errorf("the paired newcomer was answered %q", got)
	}
	stopPairingBot(t, p)

	p = startBot(t, dir, baseEnv(dir))
	say(4242, 4242, "still here after a restart")
	if got := waitSentTo(4242, 4); got != "MODEL: hello, newcomer." {
		t.Errorf("after a restart the paired newcomer was answered %q", got)
	}
	p.send("/pairs")
	expectLine(t, p, "telegram:4242 — by console:local")
	p.send("/unpair telegram:4242")
	expectLine(t, p, "Unpaired telegram:4242")
	say(4242, 4242, "and after the unpair")
	if got := waitSentTo(4242, 5); !pairingCodeRe.MatchString(got) {
		t.Errorf("after /unpair the identity was answered %q; want a new pairing code", got)
	}
	stopPairingBot(t, p)

	if n := len(llm.Requests()); n != 2 {
		t.Errorf("the model had %d requests; want 2 (the two messages sent while paired)", n)
	}
	for _, r := range llm.Requests() {
		for _, msg := range r.Messages {
			if strings.Contains(msg.Content, "stranger") || strings.Contains(msg.Content, "unpair") {
				t.Errorf("the model saw %q, sent while not paired", msg.Content)
			}
		}
	}
	db, err := sql.Open("sqlite", "file:"+dir+"/gatehouse.db?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stored int
	if err := db.QueryRow(`SELECT COUNT(*) FROM messages WHERE content LIKE '%stranger%' OR content LIKE '%unpair%'`).Scan(&stored); err != nil || stored != 0 {
		t.Errorf("%d history rows hold what was sent while not paired (%v); want none", stored, err)
	}
	for _, outcome := range []string{"paired", "unpaired"} {
		r := runOnce(t, dir, baseEnv(dir), "", "audit", "--since", "1h", "--json", "--status", outcome)
		var entries []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &entries); r.code != 0 || err != nil {
			t.Fatalf("bot audit --status %s: exit %d, %v\n%s%s", outcome, r.code, err, r.stdout, r.stderr)
		}
		if len(entries) != 1 || entries[0]["tool"] != "pairing" || entries[0]["requested_by"] != "telegram:4242" ||
			entries[0]["approved_by"] != "console:local" {
			t.Errorf("bot audit --status %s: %v; want one pairing entry, telegram:4242 by console:local", outcome, entries)
		}
	}
}

// stopPairingBot ends the bot with SIGTERM and checks it exits cleanly.
func stopPairingBot(t *testing.T, p *botProc) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("bot exited %d after SIGTERM; want 0", code)
	}
}

// TestDoctorShowsPairing: bot doctor says, per enabled platform gateway,
// whether its pairing is on.
func TestDoctorShowsPairing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", `gateways:
  telegram: {token: "123456789:AAHfakefakefakefakefakefakefakefake1", pairing: true}
  discord: {token: "discord-token-pairing"}
store: {dsn: gatehouse.db}
http: {listen: ""}
`)
	r := runOnce(t, dir, baseEnv(dir), "", "doctor")
	for _, want := range []string{"telegram: pairing on", "discord: pairing off"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("bot doctor: no line %q\n%s%s", want, r.stdout, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "console: pairing") {
		t.Errorf("bot doctor speaks of pairing for the console, which has no strangers:\n%s", r.stdout)
	}
}
