package slack

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func TestDMBecomesSignal(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}).start()
	ts := h.fake.InjectDM("U123", "hello &amp; <b>")
	s := h.inbox.Next(t)
	want := core.Conversation{Gateway: Name, Chat: "D123"}
	if s.Conv != want || s.From != "slack:U123" || s.Text != "hello & <b>" || s.MessageID != ts || !s.Private || s.Kind != core.KindMessage {
		t.Fatalf("signal %+v", s)
	}
	h.act(reply(s.Conv, "hi **there**"))
	posts := h.fake.Posts("D123")
	if len(posts) != 1 || posts[0].Text != "hi *there*" || posts[0].ThreadTS != "" {
		t.Fatalf("posts %+v", posts)
	}
}

func TestMentionStartsThreadAndFollowUpContinuesIt(t *testing.T) {
	h := newHarness(t, fakeslack.Options{EchoPosts: true}).start()
	// Not addressed, not in a thread of the bot: ignored with channel: mention.
	h.fake.InjectMessage(fakeslack.Event{Channel: "C1", User: "U1", Text: "just chatting"})
	ts := h.fake.InjectMention("C1", "U1", "what time is it?", "")
	s := h.inbox.Next(t)
	conv := core.Conversation{Gateway: Name, Chat: "C1", Thread: ts}
	if s.Conv != conv || s.Text != "what time is it?" || s.From != "slack:U1" || s.Private {
		t.Fatalf("signal %+v, want conv %s", s, conv.Key())
	}
	h.act(reply(s.Conv, "noon"))
	if p := h.fake.Posts("C1"); len(p) != 1 || p[0].ThreadTS != ts {
		t.Fatalf("reply not in the thread %s: %+v", ts, p)
	}
	// A follow-up in the thread without a mention continues the conversation;
	// the bot's own echoed post, a bot message and an edit do not.
	h.fake.InjectMessage(fakeslack.Event{Channel: "C1", User: "U0OTHER", BotID: "B9", Text: "bot noise", ThreadTS: ts})
	h.fake.InjectMessage(fakeslack.Event{Channel: "C1", User: "U1", Subtype: "message_changed", Text: "edit", ThreadTS: ts})
	h.fake.InjectMessage(fakeslack.Event{Channel: "C1", User: "U1", Text: "and in Paris?", ThreadTS: ts})
	f := h.inbox.Next(t)
	if f.Conv != conv || f.Text != "and in Paris?" {
		t.Fatalf("follow-up %+v, want conv %s", f, conv.Key())
	}
	// A mention arrives as app_mention and as a message: handled once.
	h.fake.InjectMessage(fakeslack.Event{Channel: "C1", User: "U1", Text: "<@U0BOT> once", ThreadTS: ts})
	h.fake.InjectMention("C1", "U1", "<@U0BOT> twice", ts)
	if g := h.inbox.Next(t); g.Text != "twice" || g.Conv != conv {
		t.Fatalf("mention in the thread %+v", g)
	}
	waitAcked(t, h.fake)
	h.inbox.Empty(t)
}

func TestChannelAllPassesEveryMessage(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}, func(c *Config) { c.Channel = ChannelAll }).start()
	ts := h.fake.InjectMessage(fakeslack.Event{Channel: "C2", User: "U1", Text: "anyone?"})
	s := h.inbox.Next(t)
	if s.Conv != (core.Conversation{Gateway: Name, Chat: "C2", Thread: ts}) || s.Text != "anyone?" {
		t.Fatalf("signal %+v", s)
	}
}

func TestMalformedEnvelopesSkippedAndAcknowledged(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}).start()
	h.fake.InjectRaw(`{"type":"events_api","envelope_id":"bad-1","payload":{"type":"event_callback","event":"not an object"}}`)
	h.fake.InjectRaw(`{"type":"interactive","envelope_id":"bad-2","payload":[1,2]}`)
	h.fake.InjectRaw(`not json at all`)
	h.fake.InjectMessage(fakeslack.Event{Channel: "D9", ChannelType: "im"}) // no user: skipped
	h.fake.InjectDM("U5", "still here")
	if s := h.inbox.Next(t); s.Text != "still here" {
		t.Fatalf("signal %+v", s)
	}
	testutil.WaitFor(t, "the malformed envelopes acknowledged", func() bool {
		acked := map[string]bool{}
		for _, a := range h.fake.Acks() {
			acked[a.EnvelopeID] = true
		}
		return acked["bad-1"] && acked["bad-2"]
	})
	h.inbox.Empty(t)
}

func TestReconnectsAfterDisconnectAndDroppedSocket(t *testing.T) {
	h := newHarness(t, fakeslack.Options{DisconnectGrace: 200 * time.Millisecond}).start()
	h.fake.Disconnect()
	testutil.WaitFor(t, "a new connection after disconnect", func() bool { return h.fake.Connections() >= 2 && h.fake.Live() > 0 })
	h.fake.InjectDM("U1", "after disconnect")
	if s := h.inbox.Next(t); s.Text != "after disconnect" {
		t.Fatalf("signal %+v", s)
	}
	waitAcked(t, h.fake) // an acknowledgement still in flight would be lost with the socket
	h.fake.DropConnection()
	testutil.WaitFor(t, "a new connection after the drop", func() bool { return h.fake.Connections() >= 3 && h.fake.Live() > 0 })
	h.fake.InjectDM("U1", "after drop")
	if s := h.inbox.Next(t); s.Text != "after drop" {
		t.Fatalf("signal %+v", s)
	}
	if h.gw.Reconnects() < 2 {
		t.Errorf("Reconnects() = %d, want at least 2", h.gw.Reconnects())
	}
	waitAcked(t, h.fake)
}

func TestRedeliveredEventHandledOnce(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}).start()
	h.fake.InjectDM("U1", "once")
	h.inbox.Next(t)
	waitAcked(t, h.fake)
	// Slack's retries of an event carry its event_id again.
	env := h.fake.Envelopes()[0]
	h.fake.InjectMessage(fakeslack.Event{Channel: "D1", ChannelType: "im", User: "U1", Text: "once", EventID: env.EventID})
	h.fake.InjectDM("U1", "twice")
	if s := h.inbox.Next(t); s.Text != "twice" {
		t.Fatalf("the redelivered event came through again: %+v", s)
	}
}

// waitAcked checks that every envelope written so far was acknowledged
// within 3 s. An envelope written less than 3 s ago and not acknowledged
// yet counts as late until it is; one really late never leaves the list.
func waitAcked(t *testing.T, fake *fakeslack.Server) {
	t.Helper()
	testutil.WaitFor(t, "every envelope acknowledged within 3s", func() bool {
		return len(fake.Envelopes()) > 0 && len(fake.Unacknowledged(3*time.Second)) == 0
	})

}

// TestDMMentionDeliveredAsBothEventsHandledOnce: a DM that mentions the
// bot can arrive as message.im and as app_mention (two event ids, one
// message ts), in either order; it is one message, handled once.
func TestDMMentionDeliveredAsBothEventsHandledOnce(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}).start()
	dm := fakeslack.DMChannel("U5")
	ts := h.fake.InjectMessage(fakeslack.Event{Channel: dm, ChannelType: "im", User: "U5", Text: "<@U0BOT> first"})
	h.fake.InjectMessage(fakeslack.Event{Type: "app_mention", Channel: dm, User: "U5", Text: "<@U0BOT> first", TS: ts})
	ts2 := h.fake.InjectMention(dm, "U5", "second", "")
	h.fake.InjectMessage(fakeslack.Event{Channel: dm, ChannelType: "im", User: "U5", Text: "<@U0BOT> second", TS: ts2})
	h.fake.InjectDM("U5", "third")
	var got []string
	for range 3 {
		s := h.inbox.Next(t)
		if s.Conv != (core.Conversation{Gateway: Name, Chat: dm}) || !s.Private {
			t.Fatalf("signal %+v", s)
		}
		got = append(got, s.MessageID+" "+s.Text)
	}
	if !strings.HasPrefix(got[0], ts+" ") || !strings.HasPrefix(got[1], ts2+" ") || !strings.HasSuffix(got[2], " third") {
		t.Fatalf("signals %q; want the messages %s, %s and the third, once each", got, ts, ts2)
	}
	waitAcked(t, h.fake)
	h.inbox.Empty(t)
}

// TestFilesOnlyWhenAddressed: a file shared in a DM (file_share, no text)
// is a signal with its attachment; with channel: all, a top-level channel
// message's files are not taken (its text is), a mention's are, and so
// are those of a follow-up in the bot's thread. The gateway never fetches
// on its own.
func TestFilesOnlyWhenAddressed(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}, func(c *Config) { c.Channel = ChannelAll }).start()
	file := []fakeslack.File{{Name: "cat.png", Mimetype: "image/png", Data: []byte("abc")}}
	h.fake.InjectMessage(fakeslack.Event{Channel: "D1", User: "U1", Files: file})
	s := h.inbox.Next(t)
	if s.Text != "" || !s.Private || len(s.Attachments) != 1 || s.Attachments[0].Name != "cat.png" || s.Attachments[0].Kind != core.AttachImage || s.Attachments[0].Size != 3 {
		t.Fatalf("DM: %+v", s)
	}
	h.fake.InjectMessage(fakeslack.Event{Channel: "C2", User: "U1", Text: "just sharing", Files: file})
	if s := h.inbox.Next(t); s.Text != "just sharing" || len(s.Attachments) != 0 {
		t.Fatalf("unaddressed: %+v", s)
	}
	h.fake.InjectMessage(fakeslack.Event{Channel: "C2", User: "U1", Files: file})
	ts := h.fake.InjectMessage(fakeslack.Event{Type: "app_mention", Channel: "C2", User: "U1", Text: "<@U0BOT> read this", Files: file})
	if s := h.inbox.Next(t); s.Text != "read this" || len(s.Attachments) != 1 || s.Attachments[0].MediaType != "image/png" {
		t.Fatalf("mention: %+v", s)
	}
	h.fake.InjectMessage(fakeslack.Event{Channel: "C2", User: "U1", ThreadTS: ts, Files: file})
	if s := h.inbox.Next(t); s.Conv.Thread != ts || len(s.Attachments) != 1 {
		t.Fatalf("in the bot's thread: %+v", s)
	}
	if d := h.fake.FileDownloads(); len(d) != 0 {
		t.Errorf("the gateway fetched on its own: %+v", d)
	}
	waitAcked(t, h.fake)
	h.inbox.Empty(t)
}

// TestFileWithoutTheScopeIsNotSaved: Slack answers a download by a token
// without files:read with its sign-in page; the fetch fails naming the
// scope instead of handing over the page as the file.
func TestFileWithoutTheScopeIsNotSaved(t *testing.T) {
	h := newHarness(t, fakeslack.Options{NoFilesScope: true}).start()
	h.fake.InjectMessage(fakeslack.Event{Channel: "D1", User: "U1", Files: []fakeslack.File{{Name: "a.pdf", Mimetype: "application/pdf", Data: []byte("%PDF")}}})
	s := h.inbox.Next(t)
	if len(s.Attachments) != 1 {
		t.Fatalf("signal %+v", s)
	}
	var buf strings.Builder
	err := s.Attachments[0].Fetcher.Fetch(t.Context(), &buf, 1000)
	if err == nil || !strings.Contains(err.Error(), "files:read") || buf.Len() != 0 {
		t.Fatalf("fetch: %v, wrote %q", err, buf.String())
	}
	if d := h.fake.FileDownloads(); len(d) != 1 || d[0].Authorization != "Bearer "+testBotToken {
		t.Errorf("downloads %+v", d)
	}
	waitAcked(t, h.fake)
}

// TestFileWithoutADownloadURLIsNotFetched: a tombstoned, external or
// hidden file has no url_private_download; its fetch fails saying so,
// and a URL off the file host fails without a request.
func TestFileWithoutADownloadURLIsNotFetched(t *testing.T) {
	h := newHarness(t, fakeslack.Options{})
	for url, want := range map[string]string{"": "no url_private_download", "https://example.com/files-pri/x": "not on Slack's file host"} {
		err := fileFetcher{g: h.gw, url: url}.Fetch(t.Context(), io.Discard, 1000)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "example.com") {
			t.Errorf("%q: %v", url, err)
		}
	}
}
