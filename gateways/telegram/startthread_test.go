package telegram

import (
	"strconv"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
)

// TestStartThread: in a chat with topics a forum topic is created and the
// headline posted in it; in a chat without, the headline starts a reply
// chain; where the bot may not create topics, a reply chain too.
func TestStartThread(t *testing.T) {
	const forum, plain, refused = -1001, -1002, -1003
	h := newHarness(t)
	h.fake.Forum(forum, "ops")
	h.fake.Forum(refused, "ops without rights")
	h.fake.RefuseTopics(refused)
	conv := func(chat int64) core.Conversation {
		return core.Conversation{Gateway: Name, Chat: strconv.FormatInt(chat, 10)}
	}
	last := func() (int, int, int) {
		s := h.fake.Sent()
		m := s[len(s)-1]
		return m.MessageID, m.Thread, m.ReplyTo
	}

	th, replyTo, err := h.gw.StartThread(t.Context(), conv(forum), "Webhook alerts: firing: DiskFull\nmore")
	if err != nil {
		t.Fatal(err)
	}
	topics := h.fake.Topics(forum)
	if len(topics) != 1 || topics[0].Name != "Webhook alerts: firing: DiskFull" {
		t.Fatalf("topics %+v", topics)
	}
	if want := strconv.Itoa(topics[0].ThreadID); th.Chat != conv(forum).Chat || th.Thread != want || replyTo != "" {
		t.Fatalf("forum: %s reply to %q; want the topic %s", th.Key(), replyTo, want)
	}
	if _, thread, _ := last(); thread != topics[0].ThreadID {
		t.Errorf("the headline is in topic %d; want %d", thread, topics[0].ThreadID)
	}

	for _, chat := range []int64{plain, refused} {
		th, replyTo, err := h.gw.StartThread(t.Context(), conv(chat), "Webhook alerts: firing")
		if err != nil {
			t.Fatalf("%d: %v", chat, err)
		}
		id, thread, _ := last()
		if th != conv(chat) || replyTo != strconv.Itoa(id) || thread != 0 {
			t.Fatalf("%d: %s reply to %q (headline %d in topic %d); want the chat replying to the headline", chat, th.Key(), replyTo, id, thread)
		}
		if _, err := h.gw.Act(t.Context(), core.Action{Kind: core.ActionReply, Conv: th, Text: "looked", ReplyTo: replyTo}); err != nil {
			t.Fatal(err)
		}
		if _, _, to := last(); to != id {
			t.Errorf("%d: the reply answers %d; want the headline %d", chat, to, id)
		}
	}
	if n := len(h.fake.Topics(refused)); n != 0 {
		t.Errorf("topics where they are refused: %d", n)
	}
}
