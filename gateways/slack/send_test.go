package slack

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// longText is n bytes of numbered lines, to check order and completeness.
func longText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %05d: the quick brown fox & the lazy <dog>\n", i)
	}
	return b.String()[:n]
}

func TestLongReplyArrivesCompleteAndInOrder(t *testing.T) {
	h := newHarness(t, fakeslack.Options{})
	conv := core.Conversation{Gateway: Name, Chat: "C1", Thread: "1700000000.000100"}
	text := longText(45000)
	h.act(reply(conv, text))
	posts := h.fake.Posts("C1")
	if len(posts) < 13 {
		t.Fatalf("%d posts for 45,000 characters; want them split at %d", len(posts), chunkLimit)
	}
	var got strings.Builder
	for _, p := range posts {
		if p.ThreadTS != conv.Thread {
			t.Fatalf("post outside the thread: %+v", p)
		}
		got.WriteString(unescapeSlack(p.Text))
		got.WriteString("\n")
	}
	if strings.Join(strings.Fields(got.String()), " ") != strings.Join(strings.Fields(text), " ") {
		t.Fatalf("the posts do not add up to the reply")
	}
}

func TestRateLimitStormEveryReplyOnce(t *testing.T) {
	h := newHarness(t, fakeslack.Options{})
	h.fake.FailNext("chat.postMessage", 2, fakeslack.FaultRateLimited)
	h.fake.FailNext("chat.postMessage", 1, fakeslack.FaultServer)
	h.fake.FailNext("chat.postMessage", 1, fakeslack.FaultRateLimited)
	conv := core.Conversation{Gateway: Name, Chat: "D1"}
	for i := range 3 {
		h.act(reply(conv, fmt.Sprintf("reply %d", i)))
	}
	posts := h.fake.Posts("D1")
	if len(posts) != 3 {
		t.Fatalf("%d posts, want 3: %+v", len(posts), posts)
	}
	for i, p := range posts {
		if p.Text != fmt.Sprintf("reply %d", i) {
			t.Fatalf("post %d is %q", i, p.Text)
		}
	}
	if h.fake.RateLimited() != 3 || h.fake.Early() != 0 {
		t.Fatalf("429s %d (want 3), calls before Retry-After passed %d (want 0)", h.fake.RateLimited(), h.fake.Early())
	}
	if st := h.gw.DeliveryStats(); st.Sent != 3 || st.Retried != 4 || st.Failed != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestFinalFailureLoggedWithConversation(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}, func(c *Config) { c.RetryFor = 300 * time.Millisecond })
	conv := core.Conversation{Gateway: Name, Chat: "C1", Thread: "1700000000.000200"}
	h.fake.FailNext("chat.postMessage", 1000, fakeslack.FaultServer)
	_, err := h.gw.Act(t.Context(), reply(conv, "lost"))
	if err == nil || !strings.Contains(err.Error(), conv.Key()) {
		t.Fatalf("Act: %v; want an error naming %s", err, conv.Key())
	}
	if !strings.Contains(h.logs.String(), `"level":"error","gateway":"slack","conv":"`+conv.Key()+`"`) {
		t.Fatalf("no error line with the conversation key:\n%s", h.logs.String())
	}
	if st := h.gw.DeliveryStats(); st.Failed != 1 || st.Sent != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestNoAccidentalChannelMention(t *testing.T) {
	h := newHarness(t, fakeslack.Options{})
	h.act(reply(core.Conversation{Gateway: Name, Chat: "C1"}, "hey <!channel> and <!here|here>, @everyone [x](!everyone)"))
	p := h.fake.Posts("C1")
	if len(p) != 1 || strings.Contains(p[0].Text, "<!") || !strings.Contains(p[0].Text, "&lt;!channel&gt;") {
		t.Fatalf("posts %+v", p)
	}
}

func TestSlashAnswerGoesToTheUserOnly(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}).start()
	h.fake.InjectSlashCommand(fakeslack.SlashCommand{Command: "/approve", Text: "k7q2mx9p always", User: "U7", Channel: "C3"})
	s := h.inbox.Next(t)
	if s.Conv != (core.Conversation{Gateway: Name, Chat: "C3"}) || s.From != "slack:U7" || s.Text != "/approve k7q2mx9p always" || !strings.HasPrefix(s.MessageID, slashPrefix) {
		t.Fatalf("signal %+v", s)
	}
	h.act(core.Action{Kind: core.ActionReply, Conv: s.Conv, Text: "Approved **K7Q2MX9P**.", ReplyTo: s.MessageID})
	rp := h.fake.ResponseURLPosts()
	if len(rp) != 1 || rp[0].ResponseType != "ephemeral" || rp[0].Text != "Approved *K7Q2MX9P*." {
		t.Fatalf("response_url posts %+v", rp)
	}
	if p := h.fake.Posts(""); len(p) != 0 {
		t.Fatalf("the answer was posted to the channel: %+v", p)
	}
	// Another command is answered with a note and never reaches the engine.
	h.fake.InjectSlashCommand(fakeslack.SlashCommand{Command: "/weather", User: "U7", Channel: "C3"})
	testutil.WaitFor(t, "the note on an unknown command", func() bool { return len(h.fake.ResponseURLPosts()) == 2 })
	waitAcked(t, h.fake)
	h.inbox.Empty(t)
}

// TestSlashAnswerWhenResponseURLFails: a response_url that refuses the
// answer (used up, expired, down) does not lose it: the user gets it by
// chat.postEphemeral, still visible to them only.
func TestSlashAnswerWhenResponseURLFails(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}).start()
	h.fake.InjectSlashCommand(fakeslack.SlashCommand{Command: "/pending", User: "U7", Channel: "C3"})
	s := h.inbox.Next(t)
	call, ok := h.gw.slashes.get(s.MessageID)
	if !ok {
		t.Fatalf("no slash command for %s", s.MessageID)
	}
	for range 5 { // Slack takes five posts to a response_url, then 404 used_url
		resp, err := http.Post(call.responseURL, "application/json", strings.NewReader(`{"text":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	h.act(core.Action{Kind: core.ActionReply, Conv: s.Conv, Text: "No approvals are **pending**.", ReplyTo: s.MessageID})
	e := h.fake.Ephemerals()
	if len(e) != 1 || e[0].User != "U7" || e[0].Channel != "C3" || e[0].Text != "No approvals are *pending*." {
		t.Fatalf("ephemerals %+v", e)
	}
	if p := h.fake.Posts(""); len(p) != 0 {
		t.Fatalf("the answer was posted to the channel: %+v", p)
	}
}
