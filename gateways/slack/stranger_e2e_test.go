package slack_test

import (
	"strings"
	"testing"

	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// told waits for the bot's answer containing want in thread of the
// channel, posted or shown to user only, and returns whether it was
// posted (visible to everyone, and in the thread's history).
func (e *e2e) told(t *testing.T, user, thread, want string) (posted bool) {
	t.Helper()
	testutil.WaitFor(t, want+" in the thread "+thread, func() bool {
		for _, p := range e.sl.Posts(channel) {
			if p.ThreadTS == thread && strings.Contains(p.Text, want) {
				posted = true
				return true
			}
		}
		for _, p := range e.sl.Ephemerals() {
			if p.Channel == channel && p.ThreadTS == thread && p.User == user && strings.Contains(p.Text, want) {
				return true
			}
		}
		return false
	})
	return posted
}

// TestE2EStrangersThreadIsNotTheBots is issue 28 item 8: a stranger who
// mentions the bot in a channel, for anything or for /whoami, is answered
// in the thread to them only (chat.postEphemeral), so Slack does not list
// the bot in that thread; an allowed user's later message there, written
// to colleagues without a mention, does not reach the model (before, the
// refusal made conversations.replies show the bot, and the message was
// answered). A thread where the bot answered the allowed user is still
// followed without a mention.
func TestE2EStrangersThreadIsNotTheBots(t *testing.T) {
	e := startE2E(t, fakeslack.Options{EchoPosts: true})
	e.ai.Respond(func(r fakeoai.Request) fakeoai.Step { return fakeoai.Text("answer to " + r.LastUser()) })

	refused := e.sl.InjectMention(channel, stranger, "what is in the workspace?", "")
	if e.told(t, stranger, refused, "only talk to people on my allow list") {
		t.Errorf("the refusal of a stranger's mention was posted in the channel's thread; want it shown to the stranger only")
	}
	whoami := e.sl.InjectMention(channel, stranger, "/whoami", "")
	if e.told(t, stranger, whoami, "Your identity is slack:"+stranger) {
		t.Errorf("the answer to a stranger's /whoami was posted in the channel's thread; want it shown to the stranger only")
	}

	// Colleagues talk in those threads without addressing the bot; then
	// the guest mentions it there. The conversation's signals are taken
	// in order: a message handed to the model before the mention is in
	// a request by the time the mention is answered.
	for _, thread := range []string{refused, whoami} {
		e.sl.InjectMessage(fakeslack.Event{Channel: channel, User: guest, Text: "between colleagues in " + thread, ThreadTS: thread})
		e.sl.InjectMention(channel, guest, "now you, in "+thread, thread)
		e.waitPost(t, channel, "answer to now you, in "+thread)
	}
	for _, r := range e.ai.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "between colleagues") {
				t.Errorf("the model saw a message that does not mention the bot, in a thread the bot entered only to answer a stranger: %q", m.Content)
			}
		}
	}
	if n := len(e.ai.Requests()); n != 2 {
		t.Errorf("the model saw %d requests; want 2 (the guest's mentions)", n)
	}

	// A thread the bot answered the guest in is followed without a mention.
	joined := e.sl.InjectMention(channel, guest, "hello", "")
	if p := e.waitPost(t, channel, "answer to hello"); p.ThreadTS != joined {
		t.Fatalf("the answer is outside the mention's thread %s: %+v", joined, p)
	}
	e.sl.InjectMessage(fakeslack.Event{Channel: channel, User: guest, Text: "and then?", ThreadTS: joined})
	if p := e.waitPost(t, channel, "answer to and then?"); p.ThreadTS != joined {
		t.Fatalf("the follow-up's answer is outside the thread %s: %+v", joined, p)
	}
}
