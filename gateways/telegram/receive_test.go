package telegram

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func TestPrivateMessageBecomesSignal(t *testing.T) {
	h := newHarness(t).start()
	h.fake.InjectMessage(dm(alice, "hello bot"))
	s := h.inbox.Next(t)
	want := core.Conversation{Gateway: "telegram", Chat: "1001"}
	if s.Kind != core.KindMessage || s.Conv != want || s.From != "telegram:1001" || s.Text != "hello bot" || !s.Private || s.MessageID == "" {
		t.Fatalf("signal %+v", s)
	}
	if s.Conv.Key() != "telegram:1001" {
		t.Fatalf("key %q", s.Conv.Key())
	}
}

func TestCaptionBecomesSignal(t *testing.T) {
	h := newHarness(t).start()
	m := dm(alice, "")
	m.Caption = "look at this"
	m.Extra = map[string]json.RawMessage{"photo": json.RawMessage(`[{"file_id":"p1","file_unique_id":"u1","width":1,"height":1}]`)}
	h.fake.InjectMessage(m)
	if s := h.inbox.Next(t); s.Text != "look at this" {
		t.Fatalf("signal %+v", s)
	}
}

func TestGroupMentionLogic(t *testing.T) {
	bot := "@gatehouse_bot"
	for _, tc := range []struct {
		name string
		msg  func(h *harness) faketg.Message
		want string // "" when nothing may get through
	}{
		{"not mentioned", func(*harness) faketg.Message { return inGroup(alice, "just chatting") }, ""},
		{"another bot's command", func(*harness) faketg.Message { return inGroup(alice, "/start@other_bot") }, ""},
		{"mention stripped", func(*harness) faketg.Message { return inGroup(alice, bot+" what time is it?") }, "what time is it?"},
		{"mention in the middle", func(*harness) faketg.Message { return inGroup(alice, "hey "+bot+", help") }, "hey, help"},
		{"command", func(*harness) faketg.Message { return inGroup(alice, "/pending") }, "/pending"},
		{"command with bot name", func(*harness) faketg.Message { return inGroup(alice, "/approve@gatehouse_bot K7Q2") }, "/approve K7Q2"},
		{"reply to the bot", func(h *harness) faketg.Message {
			m := inGroup(alice, "and tomorrow?")
			bot := h.fake.Bot()
			m.ReplyToMessage = &faketg.Message{MessageID: 1, From: &bot, Chat: group, Text: "sunny"}
			return m
		}, "and tomorrow?"},
		{"text mention", func(h *harness) faketg.Message {
			m := inGroup(alice, "Gatehouse please")
			bot := h.fake.Bot()
			m.Entities = []faketg.Entity{{Type: "text_mention", Offset: 0, Length: 9, User: &bot}}
			return m
		}, "please"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t).start()
			h.fake.InjectMessage(tc.msg(h))
			h.fake.InjectMessage(inGroup(bob, bot+" marker"))
			s := h.inbox.Next(t)
			if tc.want != "" {
				if s.Text != tc.want || s.Private || s.Conv.Chat != "-100500" || s.From != "telegram:1002" && s.From != "telegram:1001" {
					t.Fatalf("signal %+v, want text %q", s, tc.want)
				}
				s = h.inbox.Next(t)
			}
			if s.Text != "marker" {
				t.Fatalf("want only the marker after an unaddressed message, got %+v", s)
			}
		})
	}
}

func TestGroupAllPassesEverything(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.Group = GroupAll })).start()
	h.fake.InjectMessage(inGroup(alice, "just chatting"))
	if s := h.inbox.Next(t); s.Text != "just chatting" {
		t.Fatalf("signal %+v", s)
	}
}

func TestBotsAndEditsIgnored(t *testing.T) {
	h := newHarness(t).start()
	other := faketg.User{ID: 55, IsBot: true, FirstName: "Other"}
	h.fake.InjectMessage(dm(other, "I am a bot"))
	self := h.fake.Bot()
	h.fake.InjectMessage(faketg.Message{From: &self, Chat: group, Text: "@gatehouse_bot echo"})
	h.fake.InjectUpdate(`{"edited_message":{"message_id":3,"date":1,"edit_date":2,"chat":{"id":1001,"type":"private"},"from":{"id":1001,"is_bot":false,"first_name":"A"},"text":"edited"}}`)
	h.fake.InjectMessage(dm(alice, "real"))
	if s := h.inbox.Next(t); s.Text != "real" {
		t.Fatalf("signal %+v", s)
	}
	h.inbox.Empty(t)
}

func TestUnsupportedContentGetsAReply(t *testing.T) {
	h := newHarness(t).start()
	m := dm(alice, "")
	m.Extra = map[string]json.RawMessage{"sticker": json.RawMessage(`{"file_id":"s","file_unique_id":"u","width":1,"height":1,"is_animated":false}`)}
	h.fake.InjectMessage(m)
	testutil.WaitFor(t, "the not-supported reply", func() bool { return len(h.fake.Sent()) == 1 })
	sent := h.fake.Sent()[0]
	if sent.ChatID != alice.ID || !strings.Contains(sent.Plain, "not supported yet") || sent.ReplyTo == 0 {
		t.Fatalf("reply %+v", sent)
	}
	h.inbox.Empty(t)
}

func TestGroupStickerNotAnsweredUnlessAddressed(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.Group = GroupAll })).start()
	sticker := map[string]json.RawMessage{"sticker": json.RawMessage(`{"file_id":"s","file_unique_id":"u","width":1,"height":1,"is_animated":false}`)}
	m := inGroup(alice, "")
	m.Extra = sticker
	h.fake.InjectMessage(m)
	private := dm(bob, "")
	private.Extra = sticker
	h.fake.InjectMessage(private) // answered: marks that the group one was handled first
	testutil.WaitFor(t, "the private reply", func() bool { return len(h.fake.Sent()) > 0 })
	for _, s := range h.fake.Sent() {
		if s.ChatID == group.ID {
			t.Fatalf("answered a group sticker: %+v", s)
		}
	}
}

func TestMalformedUpdatesSkipped(t *testing.T) {
	h := newHarness(t)
	bad := h.fake.InjectUpdate(`{"message":{"message_id":"not a number","chat":{"id":1}}}`)
	noFrom := h.fake.InjectUpdate(`{"message":{"message_id":7,"date":1,"chat":{"id":1001,"type":"private"},"text":"no sender"}}`)
	good := h.fake.InjectMessage(dm(alice, "after the junk"))
	h.start()
	if s := h.inbox.Next(t); s.Text != "after the junk" {
		t.Fatalf("signal %+v", s)
	}
	testutil.WaitFor(t, "a poll confirming every update", func() bool {
		polls := h.fake.Polls()
		return polls[len(polls)-1].Offset == good+1
	})
	logs := h.logs.String()
	for _, id := range []int{bad, noFrom} {
		if !strings.Contains(logs, `"update_id":`+itoa64(int64(id))) {
			t.Errorf("update %d was not logged as skipped:\n%s", id, logs)
		}
	}
	h.inbox.Empty(t)
}

func TestStalledPollRecoveredByWatchdog(t *testing.T) {
	h := newHarness(t)
	h.fake.FailNext("getUpdates", 1, faketg.FaultHang)
	h.start()
	testutil.WaitFor(t, "the hung poll", func() bool { return h.fake.Calls("getUpdates") >= 1 })
	h.fake.InjectMessage(dm(alice, "are you there?"))
	if s := h.inbox.Next(t); s.Text != "are you there?" {
		t.Fatalf("signal %+v", s)
	}
	if n := h.fake.Calls("getUpdates"); n < 2 {
		t.Fatalf("%d getUpdates calls: the hung one was not abandoned", n)
	}
	if !strings.Contains(h.logs.String(), "stalled") {
		t.Fatalf("the stall was not logged:\n%s", h.logs.String())
	}
	if returned, err := h.run.Returned(); returned {
		t.Fatalf("Run returned (%v): recovery must not need a restart", err)
	}
}

func TestConflictLoggedAndRecovered(t *testing.T) {
	h := newHarness(t)
	h.fake.FailNext("getUpdates", 2, faketg.FaultConflict)
	h.fake.FailNext("getUpdates", 1, faketg.FaultServer)
	h.fake.FailNext("getUpdates", 1, faketg.FaultMalformed)
	h.fake.InjectMessage(dm(alice, "still here"))
	h.start()
	if s := h.inbox.Next(t); s.Text != "still here" {
		t.Fatalf("signal %+v", s)
	}
	if !strings.Contains(h.logs.String(), "another instance is polling or a webhook is set") {
		t.Fatalf("409 not reported clearly:\n%s", h.logs.String())
	}
}

func TestRestartNeitherReplaysNorLoses(t *testing.T) {
	store := &memStore{}
	fake := newFake()
	first := newHarnessOn(t, fake, withCursors(store))
	fake.InjectMessage(dm(alice, "one"))
	last := fake.InjectMessage(dm(alice, "two"))
	// Crash right after handing "two" over, before any poll confirms it.
	first.inbox.After = func(s core.Signal) {
		if s.Text == "two" {
			first.run.Cancel()
		}
	}
	first.start()
	for _, want := range []string{"one", "two"} {
		if s := first.inbox.Next(t); s.Text != want {
			t.Fatalf("first run: %+v, want %q", s, want)
		}
	}
	first.stop()
	if fake.Pending() != 2 {
		t.Fatalf("the scenario needs unconfirmed updates on the server, have %d", fake.Pending())
	}
	fake.InjectMessage(dm(alice, "three (sent while down)"))

	second := newHarnessOn(t, fake, withCursors(store)).start()
	if s := second.inbox.Next(t); s.Text != "three (sent while down)" {
		t.Fatalf("after restart: %+v (a replay, or a loss)", s)
	}
	if p := fake.Polls()[len(fake.Polls())-1]; p.Offset < last+1 {
		t.Fatalf("second run polled from offset %d, want > %d", p.Offset, last)
	}
	second.inbox.Empty(t)
}

func TestRunStopsAtOnceOnCancel(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.PollTimeout = time.Minute })).start()
	testutil.WaitFor(t, "a poll in flight", func() bool { return h.fake.Calls("getUpdates") >= 1 })
	h.stop() // fails the test if Run does not return
}

func TestOffsetIsKeptPerBot(t *testing.T) {
	// Two bots share one database: the first one's offset must not make
	// the second skip (and confirm away) its own updates.
	store := &memStore{}
	first := newHarnessOn(t, newFake(), withCursors(store)).start()
	for _, text := range []string{"a", "b", "c"} {
		first.fake.InjectMessage(dm(alice, text))
		first.inbox.Next(t)
	}
	first.stop()

	other := faketg.New(faketg.Options{Token: testToken, BotID: 424242, BotUsername: "other_bot",
		MaxPollWait: 200 * time.Millisecond, RetryAfterUnit: 10 * time.Millisecond})
	other.InjectMessage(dm(bob, "hello, other bot"))
	second := newHarnessOn(t, other, withCursors(store)).start()
	if s := second.inbox.Next(t); s.Text != "hello, other bot" {
		t.Fatalf("second bot got %+v", s)
	}
	// The cursor is saved once the engine is done with the update, which
	// may be just after the signal reached the inbox.
	for _, key := range []string{"telegram:777000111:offset", "telegram:424242:offset"} {
		testutil.WaitFor(t, "cursor "+key, func() bool {
			store.mu.Lock()
			defer store.mu.Unlock()
			return store.m[key] != ""
		})
	}
}

func TestRestartRedeliversWhatWasInProgress(t *testing.T) {
	store := &memStore{}
	fake := newFake()
	first := newHarnessOn(t, fake, withCursors(store))
	first.inbox.KeepDone = true
	slow := fake.InjectMessage(dm(alice, "slow (the engine is still on it)"))
	fake.InjectMessage(dm(bob, "fast (done)"))
	first.start()
	var inProgress core.Signal
	for range 2 {
		s := first.inbox.Next(t)
		if s.Done == nil {
			t.Fatalf("signal %q has no Done", s.Text)
		}
		if strings.HasPrefix(s.Text, "fast") {
			s.Done()
		} else {
			inProgress = s
		}
	}
	testutil.WaitFor(t, "the cursor to record the done update", func() bool {
		store.mu.Lock()
		defer store.mu.Unlock()
		return strings.Contains(store.m["telegram:777000111:offset"], ";")
	})
	// A few polls while "slow" is in progress: none may confirm it.
	n := len(fake.Polls())
	testutil.WaitFor(t, "more polls", func() bool { return len(fake.Polls()) >= n+3 })
	first.stop() // a kill: "slow" is never done
	for _, p := range fake.Polls() {
		if p.Offset > slow {
			t.Fatalf("polled with offset %d: confirmed update %d while it was in progress", p.Offset, slow)
		}
	}
	first.inbox.Empty(t)

	second := newHarnessOn(t, fake, withCursors(store)).start()
	if s := second.inbox.Next(t); s.Text != inProgress.Text {
		t.Fatalf("after restart: %q, want the update in progress again", s.Text)
	}
	fake.InjectMessage(dm(alice, "new"))
	if s := second.inbox.Next(t); s.Text != "new" {
		t.Fatalf("after restart: %q (a replay of the done update?), want the new message", s.Text)
	}
	testutil.WaitFor(t, "everything confirmed", func() bool { return fake.Pending() == 0 })
	second.inbox.Empty(t)
}

func TestUpdatesWithoutSignalAreDoneAtOnce(t *testing.T) {
	store := &memStore{}
	h := newHarness(t, withCursors(store))
	h.inbox.KeepDone = true
	h.fake.InjectUpdate(`{"edited_message":{"message_id":1}}`)
	h.fake.InjectMessage(inGroup(alice, "chatter the bot ignores"))
	last := h.fake.InjectCallback(faketg.Callback{From: alice, ChatID: alice.ID, MessageID: 1, Data: "junk"})
	h.start()
	testutil.WaitFor(t, "the offset past every update", func() bool {
		store.mu.Lock()
		defer store.mu.Unlock()
		return store.m["telegram:777000111:offset"] == strconv.Itoa(last+1)
	})
	testutil.WaitFor(t, "everything confirmed", func() bool { return h.fake.Pending() == 0 })
	h.inbox.Empty(t)
}

// TestForumTopicIsTheConversationThread: a message in a forum topic of a
// supergroup is a signal of the conversation chat:topic, and the reply,
// like the typing indicator, goes to that topic (not the General one).
func TestForumTopicIsTheConversationThread(t *testing.T) {
	h := newHarness(t).start()
	m := inGroup(alice, "@gatehouse_bot status?")
	m.Extra = map[string]json.RawMessage{"message_thread_id": json.RawMessage(`56`), "is_topic_message": json.RawMessage(`true`)}
	h.fake.InjectMessage(m)
	s := h.inbox.Next(t)
	if s.Conv.Key() != "telegram:-100500:56" || s.Text != "status?" {
		t.Fatalf("signal %+v, want conversation telegram:-100500:56", s)
	}
	stop := h.gw.StartTyping(context.Background(), s.Conv)
	testutil.WaitFor(t, "typing shown", func() bool { return len(h.fake.Actions()) > 0 })
	stop()
	if a := h.fake.Actions()[0]; a.ChatID != group.ID || a.Thread != 56 {
		t.Fatalf("typing %+v, want in topic 56", a)
	}
	if _, err := h.gw.Act(context.Background(), core.Action{Kind: core.ActionReply, Conv: s.Conv, Text: "all green", ReplyTo: s.MessageID}); err != nil {
		t.Fatal(err)
	}
	live, ok := h.gw.StartLive(context.Background(), s.Conv, "")
	if !ok {
		t.Fatal("no live reply")
	}
	if err := live.Finish(context.Background(), "streamed, all green"); err != nil {
		t.Fatal(err)
	}
	sent := h.fake.Sent()
	if len(sent) != 2 {
		t.Fatalf("sent %+v, want the reply and the streamed one", sent)
	}
	for i, want := range []string{"all green", "streamed, all green"} {
		if sent[i].ChatID != group.ID || sent[i].Thread != 56 || sent[i].Plain != want {
			t.Fatalf("sent %+v, want %q in topic 56", sent[i], want)
		}
	}
	if sent[0].ReplyTo == 0 {
		t.Fatalf("reply %+v does not answer the message", sent[0])
	}
	// A button pressed on a message in the topic is a press in the topic.
	h.fake.InjectUpdate(`{"callback_query":{"id":"cq-topic","chat_instance":"1","data":"a:K7Q2",` +
		`"from":{"id":1002,"is_bot":false,"first_name":"Bob"},` +
		`"message":{"message_id":9,"date":1,"chat":{"id":-100500,"type":"supergroup"},"message_thread_id":56,"is_topic_message":true,"text":"Approval needed"}}}`)
	testutil.WaitFor(t, "the press", func() bool { return len(h.appr.Calls()) > 0 })
	if got := h.appr.Calls()[0].Conv; got.Key() != "telegram:-100500:56" {
		t.Fatalf("press in conversation %s, want telegram:-100500:56", got.Key())
	}
}

// TestAnonymousAdminIsAnswered: an admin who remains anonymous posts as
// GroupAnonymousBot on behalf of the group; their /undo was dropped with
// the bots' messages, without a word, so it seemed never to be answered
// (issue 21 item 10). An addressed message is now answered that the bot
// cannot tell who sent it; nothing reaches the inbox, and an unaddressed
// one stays unanswered.
func TestAnonymousAdminIsAnswered(t *testing.T) {
	h := newHarness(t).start()
	anon := faketg.User{ID: 1087968824, IsBot: true, FirstName: "Group", Username: "GroupAnonymousBot"}
	onBehalf := map[string]json.RawMessage{"sender_chat": json.RawMessage(`{"id":-100500,"type":"supergroup","title":"team"}`)}
	quiet := inGroup(anon, "just chatting")
	quiet.Extra = onBehalf
	h.fake.InjectMessage(quiet)
	undo := inGroup(anon, "/undo")
	undo.Extra = onBehalf
	h.fake.InjectMessage(undo)
	testutil.WaitFor(t, "the answer to the anonymous /undo", func() bool { return len(h.fake.Sent()) > 0 })
	sent := h.fake.Sent()
	if len(sent) != 1 || sent[0].ChatID != group.ID || !strings.Contains(sent[0].Plain, "anonymously") || sent[0].ReplyTo == 0 {
		t.Fatalf("sent %+v; want one answer in the group saying it was anonymous", sent)
	}
	h.fake.InjectMessage(dm(alice, "real"))
	if s := h.inbox.Next(t); s.Text != "real" {
		t.Fatalf("signal %+v", s)
	}
	h.inbox.Empty(t)
	if got := len(h.fake.Sent()); got != 1 {
		t.Fatalf("%d messages sent; the unaddressed anonymous one was answered too", got)
	}
}
