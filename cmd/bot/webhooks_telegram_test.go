package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

const (
	forumChat = -1001001 // a supergroup with topics
	plainChat = -1001002 // a supergroup without
)

// TestTelegramIncidentThreads is issue 31's "one thread per incident" on
// Telegram. In a chat with topics the incident's first delivery creates a
// forum topic and runs there: a person's message in the topic reaches the
// bot, whose held call is approved with the topic's buttons; a later
// delivery and the resolution run in the same topic with its history. In
// a chat without topics the first delivery's headline starts a reply
// chain: the turns' replies, a later delivery's and the resolution's, all
// reply to it, and a person's reply to it is in the later turn's history.
func TestTelegramIncidentThreads(t *testing.T) {
	t.Parallel()
	tg := faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	t.Cleanup(tg.Close)
	tg.Forum(forumChat, "ops")
	hook := "  - {name: %s, format: alertmanager, secret: \"${HOOK_TOKEN}\", conversation: \"telegram:%d\", prompt: An alert changed state., events: [firing, resolved]}\n"
	b := startIncidentBot(t, fmt.Sprintf(`telegram: {token: %q, api_url: %q, allow: ["telegram:500"]}`, tg.Token(), tg.URL()), "telegram:500",
		fmt.Sprintf(`["telegram:%d", "telegram:%d"]`, forumChat, plainChat),
		fmt.Sprintf(hook, "forum", forumChat)+fmt.Sprintf(hook, "chain", plainChat))
	model := b.model
	t.Cleanup(func() {
		if t.Failed() {
			for _, s := range tg.Sent() {
				t.Logf("telegram %d topic %d reply-to %d: %q", s.ChatID, s.Thread, s.ReplyTo, s.Plain)
			}
		}
	})
	oncall := faketg.User{ID: 500, FirstName: "oncall"}
	// sent returns the bot's messages in chat carrying text.
	sent := func(chat int64, text string) []faketg.Sent {
		var out []faketg.Sent
		for _, s := range tg.Sent() {
			if s.ChatID == chat && s.Method == "sendMessage" && strings.Contains(s.Plain, text) {
				out = append(out, s)
			}
		}
		return out
	}
	deliver := func(hook, status string, fps ...string) {
		t.Helper()
		if got := postHook(t, b, hook, hookSecret, alertBody(status, fps...)); got != http.StatusAccepted {
			t.Fatalf("%s %s %v: %d; want 202", hook, status, fps, got)
		}
	}

	// A chat with topics: one topic per incident.
	deliver("forum", "firing", "aaa")
	testutil.WaitFor(t, "the turn's reply", func() bool { return len(sent(forumChat, "MODEL: looked into it")) == 1 })
	topics := tg.Topics(forumChat)
	if len(topics) != 1 || !strings.Contains(topics[0].Name, "firing: DiskFull") {
		t.Fatalf("topics %+v; want one named after the alert", topics)
	}
	topic := topics[0].ThreadID
	if h := sent(forumChat, "Webhook forum: firing: DiskFull"); len(h) != 1 || h[0].Thread != topic {
		t.Errorf("the headline %+v; want it in topic %d", h, topic)
	}
	if r := sent(forumChat, "MODEL: looked into it")[0]; r.Thread != topic {
		t.Errorf("the reply is in topic %d; want %d", r.Thread, topic)
	}
	tg.InjectMessage(tg.TopicMessage(forumChat, topic, oncall, "please clean up"))
	var req faketg.Sent
	testutil.WaitFor(t, "the approval request in the topic", func() bool {
		for _, s := range tg.Sent() {
			if s.ChatID == forumChat && s.Thread == topic && len(s.Markup.Buttons()) > 0 {
				req = s
				return true
			}
		}
		return false
	})
	for _, bt := range req.Markup.Buttons() {
		if bt.Text == "✅ Approve" {
			tg.InjectCallback(faketg.Callback{From: oncall, ChatID: forumChat, MessageID: req.MessageID, Data: bt.CallbackData})
		}
	}
	testutil.WaitFor(t, "the approved call's end in the topic", func() bool {
		r := sent(forumChat, "MODEL: the cleanup ran.")
		return len(r) == 1 && r[0].Thread == topic
	})
	deliver("forum", "firing", "aaa", "bbb")
	testutil.WaitFor(t, "the later delivery's turn", func() bool { return strings.Contains(lastUser(model), "db-bbb") })
	if r := lastRequest(model); !history(r, "please clean up") || !history(r, "db-aaa") {
		t.Errorf("the later delivery's turn lacks the topic's history: %d messages", len(r.Messages))
	}
	deliver("forum", "resolved", "aaa", "bbb")
	testutil.WaitFor(t, "the resolution's reply", func() bool { return len(sent(forumChat, "MODEL: looked into it")) == 3 })
	for _, s := range tg.Sent() {
		if s.ChatID == forumChat && s.Thread != topic {
			t.Errorf("a message outside the incident's topic: %q", s.Plain)
		}
	}
	if n := len(tg.Topics(forumChat)); n != 1 {
		t.Errorf("topics %d; want 1", n)
	}

	// A chat without topics: a reply chain under the headline.
	deliver("chain", "firing", "aaa")
	testutil.WaitFor(t, "the turn's reply", func() bool { return len(sent(plainChat, "MODEL: looked into it")) == 1 })
	heads := sent(plainChat, "Webhook chain: firing: DiskFull")
	if len(heads) != 1 || heads[0].ReplyTo != 0 {
		t.Fatalf("headlines %+v; want one", heads)
	}
	head := heads[0].MessageID
	tg.InjectMessage(faketg.Message{From: &oncall, Chat: faketg.Chat{ID: plainChat, Type: "supergroup"}, Text: "is db-aaa the primary?",
		ReplyToMessage: &faketg.Message{MessageID: head, From: &faketg.User{ID: tg.Bot().ID, IsBot: true}, Chat: faketg.Chat{ID: plainChat, Type: "supergroup"}}})
	testutil.WaitFor(t, "the answer to the person's reply", func() bool { return len(sent(plainChat, "MODEL: looked into it")) == 2 })
	deliver("chain", "firing", "aaa", "bbb")
	testutil.WaitFor(t, "the later delivery's turn", func() bool { return strings.Contains(lastUser(model), "db-bbb") })
	if r := lastRequest(model); !history(r, "is db-aaa the primary?") || !history(r, "db-aaa") {
		t.Errorf("the later delivery's turn lacks the chain's history: %d messages", len(r.Messages))
	}
	deliver("chain", "resolved", "aaa", "bbb")
	testutil.WaitFor(t, "the resolution's reply", func() bool { return len(sent(plainChat, "MODEL: looked into it")) == 4 })
	replies := sent(plainChat, "MODEL: looked into it")
	for _, i := range []int{0, 2, 3} { // the incident's turns; [1] answers the person
		if replies[i].ReplyTo != head {
			t.Errorf("reply %d answers message %d; want the headline %d", i, replies[i].ReplyTo, head)
		}
	}
	if n := len(sent(plainChat, "Webhook chain:")); n != 1 {
		t.Errorf("headlines %d; want 1", n)
	}
	for i, r := range model.Requests() {
		if !profiled(r) {
			t.Errorf("model request %d lacks the chat's profile", i)
		}
	}
}
