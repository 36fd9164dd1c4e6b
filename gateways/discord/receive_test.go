package discord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func TestDMBecomesSignal(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake).start()
	if ids := fake.Identifies(); ids[0].Intents != int(intents) {
		t.Errorf("intents %d, want %d", ids[0].Intents, intents)
	}
	id := fake.InjectMessage(dm(fake, ann, "hello there"))
	s := h.inbox.Next(t)
	want := core.Conversation{Gateway: Name, Chat: fake.DMChannel(ann.ID)}
	if s.Conv != want || s.From != "discord:3001" || s.Text != "hello there" || s.MessageID != id || !s.Private || s.Kind != core.KindMessage {
		t.Fatalf("signal %+v", s)
	}
}

func TestGuildMentionMode(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake).start()
	fake.InjectMessage(inGuild(ann, "just chatting"))
	fake.InjectMessage(inGuild(otherBot, mention(fake)+" I am a bot"))
	fake.InjectMessage(inGuild(ann, mention(fake)+" what is up?"))
	s := h.inbox.Next(t)
	if s.Text != "what is up?" || s.Private || s.Conv.Chat != chanID || s.From != "discord:3001" {
		t.Fatalf("signal %+v", s)
	}
	// A reply to the bot's message and a command are addressed too.
	if _, err := h.gw.Act(t.Context(), reply(chanID, "I said something")); err != nil {
		t.Fatal(err)
	}
	botMsg := fake.Messages(chanID)[0].ID
	fake.InjectMessage(fakediscord.Message{ChannelID: chanID, GuildID: guildID, Author: ben, Content: "and a reply", ReplyTo: botMsg})
	if s := h.inbox.Next(t); s.Text != "and a reply" || s.From != "discord:3002" {
		t.Fatalf("reply signal %+v", s)
	}
	fake.InjectMessage(inGuild(ben, "/pending"))
	if s := h.inbox.Next(t); s.Text != "/pending" {
		t.Fatalf("command signal %+v", s)
	}
	h.inbox.Empty(t)
}

func TestGuildAllMode(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake, func(c *Config) { c.Guild = GuildAll }).start()
	fake.InjectMessage(inGuild(ann, "no mention at all"))
	if s := h.inbox.Next(t); s.Text != "no mention at all" {
		t.Fatalf("signal %+v", s)
	}
}

func TestOwnMessagesIgnored(t *testing.T) {
	fake := newFake(fakediscord.Options{}) // the fake echoes the bot's messages, as Discord does
	h := newHarness(t, fake, func(c *Config) { c.Guild = GuildAll }).start()
	if _, err := h.gw.Act(t.Context(), reply(chanID, "from the bot "+mention(fake))); err != nil {
		t.Fatal(err)
	}
	fake.InjectMessage(inGuild(ann, "after"))
	if s := h.inbox.Next(t); s.Text != "after" {
		t.Fatalf("first signal %+v: the bot's own message came back", s)
	}
}

// TestGuildFilesOnlyWhenAddressed: a file alone in a DM is a signal with
// its attachment; with guild: all, a guild message with a file that does
// not address the bot reaches the core as its text alone (and without
// text, not at all); addressed, it carries the file. The gateway never
// fetches on its own. A sticker alone is still answered "not supported".
func TestGuildFilesOnlyWhenAddressed(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake, func(c *Config) { c.Guild = GuildAll }).start()
	file := func(m fakediscord.Message) fakediscord.Message {
		m.Attachments = []fakediscord.Attachment{{Filename: "cat.png", ContentType: "image/png", Data: []byte("abc")}}
		return m
	}
	fake.InjectMessage(file(dm(fake, ann, "")))
	s := h.inbox.Next(t)
	if s.Text != "" || len(s.Attachments) != 1 || s.Attachments[0].Name != "cat.png" || s.Attachments[0].Kind != core.AttachImage || s.Attachments[0].Size != 3 {
		t.Fatalf("DM: %+v", s)
	}
	fake.InjectMessage(file(inGuild(ann, "just sharing")))
	if s := h.inbox.Next(t); s.Text != "just sharing" || len(s.Attachments) != 0 {
		t.Fatalf("unaddressed: %+v", s)
	}
	fake.InjectMessage(file(inGuild(ann, "")))
	fake.InjectMessage(file(inGuild(ann, mention(fake)+" read this")))
	if s := h.inbox.Next(t); s.Text != "read this" || len(s.Attachments) != 1 || s.Attachments[0].MediaType != "image/png" {
		t.Fatalf("addressed: %+v", s)
	}
	if d := fake.Downloads(); len(d) != 0 {
		t.Errorf("the gateway fetched on its own: %+v", d)
	}
	fake.InjectDispatch("MESSAGE_CREATE", []byte(`{"id":"91","channel_id":"`+fake.DMChannel(ann.ID)+`","type":0,"content":"",`+
		`"author":{"id":"`+ann.ID+`","username":"ann","discriminator":"0"},"sticker_items":[{"id":"1","name":"wave","format_type":1}]}`))
	ch := fake.DMChannel(ann.ID)
	testutil.WaitFor(t, "the not-supported reply", func() bool {
		msgs := fake.Messages(ch)
		return len(msgs) == 1 && strings.Contains(msgs[0].Content, "not supported yet")
	})
	h.inbox.Empty(t)
}

func TestMalformedDispatchSkipped(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake).start()
	fake.InjectDispatch("MESSAGE_CREATE", []byte(`{"id":12,"channel_id":["x"],"content":5}`))
	fake.InjectDispatch("MESSAGE_CREATE", []byte(`{"id":"77","channel_id":"4001","content":"no author"}`))
	fake.InjectDispatch("INTERACTION_CREATE", []byte(`{"id":"88","type":3,"data":"nope"}`))
	fake.InjectMessage(dm(fake, ann, "still alive"))
	if s := h.inbox.Next(t); s.Text != "still alive" {
		t.Fatalf("signal %+v", s)
	}
	if logs := h.logs.String(); strings.Count(logs, "skipping a malformed") < 3 {
		t.Errorf("malformed events not logged:\n%s", logs)
	}
}

func TestReconnects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(*fakediscord.Server)
	}{
		{"dropped", (*fakediscord.Server).DropConnection},
		{"op 7", (*fakediscord.Server).SendReconnect},
		{"op 9", func(s *fakediscord.Server) { s.SendInvalidSession(false) }},
		{"no heartbeat acks", func(s *fakediscord.Server) { s.SetHeartbeatAcks(false) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(fakediscord.Options{HeartbeatInterval: 50 * time.Millisecond})
			h := newHarness(t, fake).start()
			fake.InjectMessage(dm(fake, ann, "before"))
			h.inbox.Next(t)
			sessions := len(fake.Identifies()) + len(fake.Resumes())
			tc.break_(fake)
			testutil.WaitFor(t, "a new session", func() bool {
				return len(fake.Identifies())+len(fake.Resumes()) > sessions && fake.Connected() == 1
			})
			fake.SetHeartbeatAcks(true)
			fake.InjectMessage(dm(fake, ann, "after"))
			if s := h.inbox.Next(t); s.Text != "after" {
				t.Fatalf("signal %+v", s)
			}
			if tc.name == "op 7" { // the session survives a reconnect request: it is resumed
				if r := fake.Resumes(); len(r) == 0 || !r[0].OK || len(fake.Identifies()) != 1 {
					t.Errorf("op 7: resumes %+v, %d identifies; want one resumed session", r, len(fake.Identifies()))
				}
			}
			if tc.name != "op 9" { // op 9 re-identifies on the same socket
				testutil.WaitFor(t, "the reconnect counted and logged", func() bool {
					return h.gw.Reconnects() > 0 && strings.Contains(h.logs.String(), "websocket reconnected")
				})
				if m := h.metricsText(); !strings.Contains(m, `gatehouse_gateway_reconnects_total{gateway="discord"} `) ||
					strings.Contains(m, `gatehouse_gateway_reconnects_total{gateway="discord"} 0`) {
					t.Errorf("the reconnect is not in the metrics:\n%s", m)
				}
			}
		})
	}
}

// stoppedInbox is an engine that has stopped.
type stoppedInbox struct{}

func (stoppedInbox) Submit(context.Context, core.Signal) error { return core.ErrStopped }

func TestRunEndsWhenTheEngineStops(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake)
	done := make(chan error, 1)
	go func() { done <- h.gw.Run(context.Background(), stoppedInbox{}) }()
	fake.InjectMessage(dm(fake, ann, "anyone there?"))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return once the engine refused a signal")
	}
	testutil.WaitFor(t, "the websocket closed", func() bool { return fake.Connected() == 0 })
}
