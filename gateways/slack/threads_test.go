package slack

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// allowUsers is an allow list of Slack member ids (gateways.Admission).
type allowUsers map[string]bool

func (a allowUsers) Allowed(s core.Signal) bool {
	return a[strings.TrimPrefix(string(s.From), Name+":")]
}

// storeMemory is a gateways.Memory that outlives a gateway, as the store
// does across a restart.
type storeMemory struct {
	mu sync.Mutex
	m  map[string]bool
}

func (s *storeMemory) Remember(_ context.Context, scope, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]bool)
	}
	s.m[scope+" "+key] = true
	return nil
}

func (s *storeMemory) Remembered(_ context.Context, scope, key string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[scope+" "+key], nil
}

var _ gateways.Memory = (*storeMemory)(nil)

// dropped checks that what the test injected before was not submitted: a
// DM from marker injected after it is the next signal.
func (h *harness) dropped(t *testing.T, what string) {
	t.Helper()
	h.fake.InjectDM("U0MARK", "marker")
	if s := h.inbox.Next(t); s.Text != "marker" {
		t.Fatalf("%s was submitted: %+v", what, s)
	}
}

// TestStrangerThreadsDoNotEvictAllowedOnes is issue 21 item 6: a
// stranger's mentions in many threads do not make the gateway forget the
// thread of an allowed user, whose reply there without a mention is still
// answered (from memory: Slack is not asked). No lookup is made for the
// stranger.
func TestStrangerThreadsDoNotEvictAllowedOnes(t *testing.T) {
	h := newHarnessWith(t, newFake(fakeslack.Options{}), Deps{Auth: allowUsers{"U0OK": true, "U0MARK": true}},
		func(c *Config) { c.Threads = 8 }).start()
	ts := h.fake.InjectMention("C1", "U0OK", "hello", "")
	if s := h.inbox.Next(t); s.Conv.Thread != ts {
		t.Fatalf("mention signal %+v", s)
	}
	for i := range 20 {
		th := h.fake.InjectMention("C1", "U0BAD", fmt.Sprint("spam ", i), "")
		if s := h.inbox.Next(t); s.From != "slack:U0BAD" { // the engine refuses it
			t.Fatalf("stranger's mention %d: %+v", i, s)
		}
		h.fake.InjectMessage(fakeslack.Event{Channel: "C1", User: "U0BAD", Text: "more", ThreadTS: th})
	}
	h.fake.InjectMessage(fakeslack.Event{Channel: "C1", User: "U0OK", Text: "and then?", ThreadTS: ts})
	if s := h.inbox.Next(t); s.Text != "and then?" || s.Conv.Thread != ts {
		t.Fatalf("the allowed user's thread reply after the stranger's threads: %+v", s)
	}
	if calls := h.fake.RepliesCalls(); len(calls) != 0 {
		t.Errorf("conversations.replies called %d times (%+v); want none: the thread is remembered, and strangers are never looked up", len(calls), calls)
	}
}

// TestThreadsSurviveARestart: a new gateway with the same Memory (the
// store) answers an allowed user's reply without a mention in a thread
// the bot joined before the restart, without asking Slack.
func TestThreadsSurviveARestart(t *testing.T) {
	fake := newFake(fakeslack.Options{})
	mem := &storeMemory{}
	h := newHarnessWith(t, fake, Deps{Memory: mem}).start()
	ts := fake.InjectMention("C1", "U1", "hello", "")
	s := h.inbox.Next(t)
	h.act(reply(s.Conv, "hi"))
	h.stop()
	// The next gateway's start waits for a live socket: not the old one,
	// which the fake may not have seen closed yet (an event sent to it
	// would be lost, and the test with it).
	testutil.WaitFor(t, "the old socket closed", func() bool { return fake.Live() == 0 })
	// The bot's reply is gone from Slack's answer: only memory can tell.
	fake.FailNext("conversations.replies", 10, fakeslack.FaultServer)

	h2 := newHarnessWith(t, fake, Deps{Memory: mem}).start()
	fake.InjectMessage(fakeslack.Event{Channel: "C1", User: "U1", Text: "still there?", ThreadTS: ts})
	if s := h2.inbox.Next(t); s.Text != "still there?" || s.Conv.Thread != ts {
		t.Fatalf("reply after the restart: %+v", s)
	}
	if n := fake.Calls("conversations.replies"); n != 0 {
		t.Errorf("conversations.replies called %d times; want none (the thread is remembered)", n)
	}
}

// TestUnknownThreadWhereTheBotTookPart: a thread the gateway does not
// remember, where Slack's conversations.replies shows the bot's message,
// is answered for an allowed user (one bounded page asked once: the thread
// is remembered); one where the bot never wrote is not, and a stranger's
// reply is never looked up.
func TestUnknownThreadWhereTheBotTookPart(t *testing.T) {
	fake := newFake(fakeslack.Options{})
	h := newHarnessWith(t, fake, Deps{Auth: allowUsers{"U1": true, "U0MARK": true}}).start()
	joined := fake.Said(fakeslack.Event{Channel: "C1", User: "U1", Text: "<@U0BOT> help"})
	fake.Said(fakeslack.Event{Channel: "C1", User: fake.BotUserID(), BotID: fake.BotID(), Text: "sure", ThreadTS: joined})
	other := fake.Said(fakeslack.Event{Channel: "C1", User: "U2", Text: "lunch?"})
	fake.Said(fakeslack.Event{Channel: "C1", User: "U1", Text: "yes", ThreadTS: other})

	fake.InjectMessage(fakeslack.Event{Channel: "C1", User: "U0BAD", Text: "me too", ThreadTS: joined})
	h.dropped(t, "a stranger's reply in a thread the bot is part of")
	if calls := fake.RepliesCalls(); len(calls) != 0 {
		t.Fatalf("a stranger's reply was looked up: %+v", calls)
	}

	fake.InjectMessage(fakeslack.Event{Channel: "C1", User: "U1", Text: "thanks, and…", ThreadTS: joined})
	if s := h.inbox.Next(t); s.Text != "thanks, and…" || s.Conv != (core.Conversation{Gateway: Name, Chat: "C1", Thread: joined}) {
		t.Fatalf("reply in a thread the bot took part in: %+v", s)
	}
	fake.InjectMessage(fakeslack.Event{Channel: "C1", User: "U1", Text: "again", ThreadTS: joined})
	if s := h.inbox.Next(t); s.Text != "again" {
		t.Fatalf("second reply: %+v", s)
	}
	calls := fake.RepliesCalls()
	if len(calls) != 1 || calls[0].Channel != "C1" || calls[0].TS != joined || calls[0].Limit != fmt.Sprint(repliesLimit) || calls[0].Cursor != "" {
		t.Fatalf("conversations.replies calls = %+v; want one first page of %d for the thread", calls, repliesLimit)
	}

	fake.InjectMessage(fakeslack.Event{Channel: "C1", User: "U1", Text: "see you", ThreadTS: other})
	h.dropped(t, "a reply in a thread without the bot")
	if n := len(fake.RepliesCalls()); n != 2 {
		t.Errorf("%d conversations.replies calls; want 2", n)
	}
}

// TestThreadLookupBounded: a conversations.replies that fails, or hangs
// past LookupTimeout, drops the reply (logged) and receiving goes on.
func TestThreadLookupBounded(t *testing.T) {
	fake := newFake(fakeslack.Options{})
	h := newHarnessWith(t, fake, Deps{}, func(c *Config) { c.LookupTimeout = 100 * time.Millisecond }).start()
	joined := fake.Said(fakeslack.Event{Channel: "C1", User: "U1", Text: "hi"})
	fake.Said(fakeslack.Event{Channel: "C1", User: fake.BotUserID(), BotID: fake.BotID(), Text: "hello", ThreadTS: joined})
	fake.FailNext("conversations.replies", 1, fakeslack.FaultHang)
	fake.FailNext("conversations.replies", 1, fakeslack.FaultServer)
	for _, what := range []string{"hung", "failed"} {
		fake.InjectMessage(fakeslack.Event{Channel: "C1", User: "U1", Text: what, ThreadTS: joined})
		h.dropped(t, "a reply whose lookup "+what)
	}
	testutil.WaitFor(t, "the failed lookups logged", func() bool {
		return strings.Count(h.logs.String(), "could not ask Slack whether the bot is part of a thread") == 2
	})
}

// TestEventsAnsweredBeforeTheThreadLookup: in events mode the 200 reaches
// Slack before a thread lookup starts, so a slow conversations.replies
// cannot push the answer past Slack's 3 seconds.
func TestEventsAnsweredBeforeTheThreadLookup(t *testing.T) {
	fake := newFake(fakeslack.Options{})
	h := newHarnessWith(t, fake, Deps{}, eventsMode, func(c *Config) { c.LookupTimeout = time.Minute }).start()
	srv := httptest.NewServer(h.gw.EventsHandler())
	defer srv.Close()
	joined := fake.Said(fakeslack.Event{Channel: "C1", User: "U1", Text: "hi"})
	fake.Said(fakeslack.Event{Channel: "C1", User: fake.BotUserID(), BotID: fake.BotID(), Text: "hello", ThreadTS: joined})
	fake.FailNext("conversations.replies", 1, fakeslack.FaultHang)
	req, _, _ := fake.Signer(testSecret).EventCallback(srv.URL+EventsPath, fakeslack.Event{Channel: "C1", User: "U1", Text: "more", ThreadTS: joined})
	client := srv.Client()
	client.Timeout = 10 * time.Second // the lookup is held far longer
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("no answer while the lookup is held: %v", err)
	}
	if _, err := io.ReadAll(resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("answer: %d, %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	testutil.WaitFor(t, "the held lookup", func() bool { return fake.Calls("conversations.replies") == 1 })
	fake.Release()
	if s := h.inbox.Next(t); s.Text != "more" {
		t.Fatalf("signal %+v", s)
	}
}

// lostOnSubmit is an Inbox whose store is lost after an event was
// acknowledged: every Submit fails with core.ErrUnavailable.
type lostOnSubmit struct{}

func (lostOnSubmit) Submit(context.Context, core.Signal) error {
	return fmt.Errorf("%w: the test's store was lost", core.ErrUnavailable)
}

// TestUnavailableNoteToAStrangerIsTheirsOnly is issue 28 item 8: when the
// store is lost after a stranger's mention was acknowledged, the note
// telling them to try again is shown to them only and does not make the
// bot part of their thread (it was posted in the thread and remembered
// it); an allowed user's note is posted in their thread as before.
func TestUnavailableNoteToAStrangerIsTheirsOnly(t *testing.T) {
	fake := newFake(fakeslack.Options{})
	h := newHarnessWith(t, fake, Deps{Auth: allowUsers{"U1": true}}).startOn(lostOnSubmit{})
	strangers := fake.InjectMention("C1", "U0BAD", "hello", "")
	allowed := fake.InjectMention("C1", "U1", "hello", "")
	noteIn := func(thread string) (posted, shown bool) {
		for _, p := range fake.Posts("C1") {
			posted = posted || (p.ThreadTS == thread && p.Text == gateways.UnavailableNote)
		}
		for _, e := range fake.Ephemerals() {
			shown = shown || (e.Channel == "C1" && e.ThreadTS == thread && e.User == "U0BAD" && e.Text == gateways.UnavailableNote)
		}
		return posted, shown
	}
	testutil.WaitFor(t, "both notes", func() bool {
		sp, ss := noteIn(strangers)
		ap, _ := noteIn(allowed)
		return (sp || ss) && ap
	})
	if posted, _ := noteIn(strangers); posted {
		t.Errorf("the note to a stranger was posted in their thread; want it shown to them only")
	}
	if known, _ := h.gw.threads.Remembered(t.Context(), threadScope, "C1:"+strangers); known {
		t.Errorf("the stranger's thread is remembered as one the bot is part of")
	}
}
