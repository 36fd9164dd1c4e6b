package app_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/app/storetable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

// codeRe finds the pairing code in the reply a stranger gets.
var codeRe = regexp.MustCompile(`pairing code is ([A-Z2-9]{8})\b`)

// pairBot is a wired gatehouse whose "telegram" (a recording gateway) has
// pairing on, on a settable clock; telegram:ops is the approver.
type pairBot struct {
	t     *testing.T
	clock *storetest.Clock
	ai    *fakeoai.Server
	gw    *recordingGateway
	inbox gateways.Inbox
	cfg   *config.Config
	stop  func() // stops the bot and closes its store; once
}

// pairBots numbers the bots startPairBot starts.
var pairBots atomic.Int64

// startPairBot starts a bot on the store section store (YAML), answering
// with the fake model ai.
func startPairBot(t *testing.T, ai *fakeoai.Server, store string, clock *storetest.Clock) *pairBot {
	t.Helper()
	dir := t.TempDir()
	yaml := fmt.Sprintf(`
llm: {providers: [{name: fake, base_url: %q, model: fake-model}]}
gateways: {console: {enabled: false}, telegram: {pairing: true}}
hitl: {approvers: ["telegram:ops"]}
tools: {workspace: %q}
store: %s
http: {listen: ""}
`, ai.URL(), filepath.Join(dir, "ws"), store)
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	if err != nil {
		t.Fatal(err)
	}
	b := &pairBot{t: t, clock: clock, ai: ai, gw: &recordingGateway{inbox: make(chan gateways.Inbox, 1)}, cfg: cfg}
	ctx, cancel := context.WithCancel(context.Background())
	// Each bot a name of its own: the default, hostname-pid, is this
	// process's, and a second App under it on a shared store is refused.
	a, err := app.New(ctx, app.Options{Config: cfg, Log: zerolog.Nop(), Secrets: secrets.New(),
		Gateways: []gateways.Gateway{b.gw}, Now: clock.Now, Instance: fmt.Sprintf("pair-bot-%d", pairBots.Add(1))})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }() //nolint:errcheck // ends with ctx
	var once sync.Once
	b.stop = func() { once.Do(func() { cancel(); <-done; a.Close() }) }
	t.Cleanup(b.stop)
	b.inbox = <-b.gw.inbox
	return b
}

// submit sends text from telegram:<from> in chat (a direct message when
// chat is from).
func (b *pairBot) submit(from, chat, text string) {
	b.t.Helper()
	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "telegram", Chat: chat},
		From: core.Identity("telegram:" + from), Text: text, Private: chat == from}
	if err := b.inbox.Submit(context.Background(), s); err != nil {
		b.t.Fatal(err)
	}
}

// say sends text and waits for the next reply in chat, which it returns.
func (b *pairBot) say(from, chat, text string) string {
	b.t.Helper()
	n := len(b.gw.to(chat))
	b.submit(from, chat, text)
	testutil.WaitFor(b.t, "the answer to "+text, func() bool { return len(b.gw.to(chat)) > n })
	return b.gw.to(chat)[n]
}

// code returns the pairing code in a stranger's reply.
func code(t *testing.T, reply string) string {
	t.Helper()
	m := codeRe.FindStringSubmatch(reply)
	if m == nil {
		t.Fatalf("no pairing code in the reply %q", reply)
	}
	return m[1]
}

// TestPairingWrongAndExpiredCodes: a stranger's direct message gets a
// pairing code, the same one when asked again, and nothing reaches the
// model; a stranger in a group gets the old refusal and no code; a wrong
// code and, past its hour, the right one are refused with the same
// words; a new code then pairs, the newcomer is told, and only their
// message after the pairing reaches the model.
func TestPairingWrongAndExpiredCodes(t *testing.T) {
	ai := fakeoai.Start(t)
	ai.Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Text("an answer") })
	clock := storetest.NewClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	b := startPairBot(t, ai, fmt.Sprintf("{dsn: %q}", filepath.Join(t.TempDir(), "gatehouse.db")), clock)

	first := code(t, b.say("4242", "4242", "hello, may I talk?"))
	if strings.Contains(b.gw.to("4242")[0], "allow list") {
		t.Errorf("the stranger got the refusal with the code: %q", b.gw.to("4242")[0])
	}
	group := b.say("777", "-100123", "hello group")
	if codeRe.MatchString(group) || !strings.Contains(group, "allow list") {
		t.Errorf("a stranger in a group was answered %q; want the refusal and no code", group)
	}
	clock.Set(clock.Now().Add(11 * time.Minute)) // past the one reply per ten minutes
	if again := code(t, b.say("4242", "4242", "hello again")); again != first {
		t.Errorf("asked again within the hour, the stranger got %s; want the same code %s", again, first)
	}

	wrong := "ABCDEFGH"
	if wrong == first {
		wrong = "HGFEDCBA"
	}
	wrongReply := b.say("ops", "ops", "/pair "+wrong)
	if !strings.Contains(wrongReply, "wrong or has expired") {
		t.Fatalf("/pair with a wrong code answered %q", wrongReply)
	}
	clock.Set(clock.Now().Add(50 * time.Minute)) // 61 minutes after the code
	if got := b.say("ops", "ops", "/pair "+first); got != wrongReply {
		t.Fatalf("/pair with an expired code answered %q; want what a wrong code gets, %q", got, wrongReply)
	}
	if n := len(b.gw.to("4242")); n != 2 {
		t.Fatalf("the stranger got %d messages; want their two codes only (no 'you can talk')", n)
	}
	if n := len(ai.Requests()); n != 0 {
		t.Fatalf("%d requests reached the model; a stranger's messages and the commands must not", n)
	}

	second := code(t, b.say("4242", "4242", "and now?"))
	if second == first {
		t.Errorf("after expiry the stranger got the expired code %s again", first)
	}
	if got := b.say("ops", "ops", "/pair "+strings.ToLower(second[:4])+"-"+second[4:]); !strings.Contains(got, "Paired telegram:4242") {
		t.Fatalf("/pair with the current code answered %q", got)
	}
	testutil.WaitFor(t, "the newcomer told", func() bool { return len(b.gw.to("4242")) == 4 })
	if got := b.gw.to("4242")[3]; !strings.Contains(got, "you can talk to me now") {
		t.Errorf("the newcomer was told %q", got)
	}
	if got := b.say("ops", "ops", "/pair "+second); !strings.Contains(got, "wrong or has expired") {
		t.Errorf("a used code answered %q; want it refused (single use)", got)
	}
	if got := b.say("4242", "4242", "finally"); got != "an answer" {
		t.Fatalf("the paired newcomer was answered %q", got)
	}
	var users []string
	for _, m := range ai.Requests()[0].Messages {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if len(users) != 1 || users[0] != "finally" {
		t.Errorf("the model saw the user messages %q; want only the one sent after the pairing", users)
	}
}

// TestPairingFloodKeeps100Codes: a thousand strangers each get a code,
// but at most 100 codes are pending at once (the older ones forgotten):
// of the thousand codes, exactly 100 pair. Nothing reaches the model.
func TestPairingFloodKeeps100Codes(t *testing.T) {
	ai := fakeoai.Start(t)
	ai.Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Text("an answer") })
	clock := storetest.NewClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	b := startPairBot(t, ai, fmt.Sprintf("{dsn: %q}", filepath.Join(t.TempDir(), "gatehouse.db")), clock)
	const strangers, batch, keep = 1000, 10, 100
	var codes []string
	for from := 0; from < strangers; from += batch {
		// In batches of 10, each waited for: the batches are handed
		// out in order, the last one newest. batch/StrangerRate seconds apart: all
		// strangers' replies together are bounded (core.StrangerBurst at
		// once, core.StrangerRate a second).
		clock.Set(clock.Now().Add(batch * time.Second / core.StrangerRate))
		for i := from; i < from+batch; i++ {
			id := fmt.Sprint(10000 + i)
			b.submit(id, id, "let me in")
		}
		testutil.WaitFor(t, fmt.Sprintf("strangers %d to %d answered", from, from+batch-1), func() bool {
			b.gw.mu.Lock()
			defer b.gw.mu.Unlock()
			return len(b.gw.sent) >= from+batch
		})
	}
	for i := range strangers {
		replies := b.gw.to(fmt.Sprint(10000 + i))
		if len(replies) != 1 {
			t.Fatalf("stranger %d got %d replies; want 1", i, len(replies))
		}
		codes = append(codes, code(t, replies[0]))
	}
	if n := len(ai.Requests()); n != 0 {
		t.Errorf("%d requests reached the model", n)
	}
	for _, c := range []string{codes[0], codes[strangers/2], codes[strangers-keep-1]} {
		if got := b.say("ops", "ops", "/pair "+c); !strings.Contains(got, "wrong or has expired") {
			t.Errorf("/pair of a code older than the newest 100 answered %q; want it forgotten", got)
		}
	}
	if got := b.say("ops", "ops", "/pair "+codes[strangers-1]); !strings.Contains(got, "Paired") {
		t.Errorf("/pair of the newest code answered %q", got)
	}
	b.stop()
	st, err := storetable.Open(context.Background(), b.cfg, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pending, err := st.PairingCodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 99 {
		t.Fatalf("%d codes pending after %d strangers and one /pair; want 99 (at most 100, the newest)", len(pending), strangers)
	}
	for _, c := range pending {
		if c.Identity < "telegram:10900" {
			t.Errorf("%s's code is pending; only the last 100 strangers' should be", c.Identity)
		}
	}
	paired, err := st.PairedIdentities(context.Background())
	if err != nil || len(paired) != 1 || paired[0].Identity != "telegram:10999" || paired[0].By != "telegram:ops" {
		t.Errorf("paired identities %+v, %v; want telegram:10999 by telegram:ops", paired, err)
	}
}

// TestPairingSharedByInstances: two instances on one PostgreSQL database:
// a stranger gets a code from one, an approver pairs it on the other, and
// the first lets the newcomer in; an /unpair on the second shuts them
// out of the first.
func TestPairingSharedByInstances(t *testing.T) {
	dsn := pgtest.DSN(t)
	ai := fakeoai.Start(t)
	ai.Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Text("an answer") })
	clock := storetest.NewClock(time.Now())
	store := fmt.Sprintf("{driver: postgres, dsn: %q}", dsn)
	one := startPairBot(t, ai, store, clock)
	two := startPairBot(t, ai, store, clock)

	c := code(t, one.say("4242", "4242", "hello"))
	if got := two.say("ops", "ops", "/pair "+c); !strings.Contains(got, "Paired telegram:4242") {
		t.Fatalf("/pair on the other instance answered %q", got)
	}
	ask := paced(func() { one.submit("4242", "4242", "am I in?") })
	testutil.WaitFor(t, "the first instance answers the newcomer", func() bool {
		if len(ai.Requests()) > 0 {
			return true
		}
		ask()
		return false
	})
	if got := two.say("ops", "ops", "/unpair telegram:4242"); !strings.Contains(got, "Unpaired telegram:4242") {
		t.Fatalf("/unpair answered %q", got)
	}
	clock.Set(clock.Now().Add(11 * time.Minute)) // the stranger may be answered again
	// A message asked while the unpair had not reached this instance yet
	// is answered by the model, maybe after the code (its turn may run on
	// either instance, late under load): the code is looked for among the
	// replies since the unpair, not only in the last one.
	since := len(one.gw.to("4242"))
	ask = paced(func() { one.submit("4242", "4242", "still in?") })
	testutil.WaitFor(t, "the first instance shuts the unpaired out", func() bool {
		for _, r := range one.gw.to("4242")[since:] {
			if codeRe.MatchString(r) {
				return true // a new code: a stranger again
			}
		}
		ask()
		return false
	})
}

// paced returns f run at most every 200ms: a message sent again while a
// wait polls, without flooding the queue (refused messages get no reply).
func paced(f func()) func() {
	var last time.Time
	return func() {
		if time.Since(last) >= 200*time.Millisecond {
			last = time.Now()
			f()
		}
	}
}

// TestReloadTurnsPairingOn: gateways.<name>.pairing is applied by a
// reload, like the allow list (never logged as needing a restart): a
// stranger refused before it gets a code after it.
func TestReloadTurnsPairingOn(t *testing.T) {
	const sections = `hitl: {approvers: ["telegram:ops"]}
gateways: {console: {enabled: false}, telegram: {pairing: %v}}`
	b := startReloadBot(t, fmt.Sprintf(sections, false))
	dm := func(from string) string {
		t.Helper()
		conv := "telegram:" + from
		s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "telegram", Chat: from},
			From: core.Identity(conv), Text: "hello", Private: true}
		if err := b.inbox.Submit(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		var got string
		testutil.WaitFor(t, "the answer in "+conv, func() bool { got = b.gw.sent(conv); return got != "" })
		return got
	}
	if got := dm("55"); codeRe.MatchString(got) || !strings.Contains(got, "allow list") {
		t.Fatalf("with pairing off a stranger was answered %q; want the refusal", got)
	}
	if err := b.reload(fmt.Sprintf(sections, true)); err != nil {
		t.Fatal(err)
	}
	if got := dm("56"); !codeRe.MatchString(got) {
		t.Fatalf("after the reload turned pairing on a stranger was answered %q; want a code", got)
	}
	if strings.Contains(b.logs.String(), "pairing changed") {
		t.Errorf("gateways.telegram.pairing logged as needing a restart:\n%s", b.logs)
	}
}
