package slack

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// client is an unmodified slack-go Socket Mode client run against the fake.
// It acknowledges every envelope as it arrives (ack first), except for
// events whose text contains "noack", and hands the events on.
type client struct {
	api    *slack.Client
	events chan socketmode.Event
}

func runClient(t testing.TB, s *Server, opts ...socketmode.Option) *client {
	t.Helper()
	api := slack.New(s.BotToken(), slack.OptionAPIURL(s.URL()+"/api/"), slack.OptionAppLevelToken(s.AppToken()))
	sm := socketmode.New(api, opts...)
	c := &client{api: api, events: make(chan socketmode.Event, 100)}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = sm.RunContext(ctx) })
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-sm.Events:
				if ev.Request != nil && ev.Request.EnvelopeID != "" && !strings.Contains(string(ev.Request.Payload), "noack") {
					var payload any
					if ev.Type == socketmode.EventTypeSlashCommand {
						payload = map[string]string{"text": "acked " + ev.Data.(slack.SlashCommand).Text}
					}
					if err := sm.AckCtx(ctx, ev.Request.EnvelopeID, payload); err != nil {
						return
					}
				}
				select {
				case c.events <- ev:
				case <-ctx.Done():
					return
				}
			}
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return c
}

// next returns the next event of type typ, skipping the others.
func (c *client) next(t testing.TB, typ socketmode.EventType) socketmode.Event {
	t.Helper()
	guard := time.After(testutil.HangGuard)
	for {
		select {
		case ev := <-c.events:
			if ev.Type == typ {
				return ev
			}
		case <-guard:
			t.Fatalf("no %s event within %s", typ, testutil.HangGuard)
		}
	}
}

// nextInner returns the outer and inner event of the next events_api envelope.
func (c *client) nextInner(t testing.TB) (slackevents.EventsAPIEvent, any) {
	t.Helper()
	ev := c.next(t, socketmode.EventTypeEventsAPI)
	outer, ok := ev.Data.(slackevents.EventsAPIEvent)
	if !ok || outer.Type != slackevents.CallbackEvent {
		t.Fatalf("events_api data %T %+v", ev.Data, ev.Data)
	}
	return outer, outer.InnerEvent.Data
}

func ackedInTime(t *testing.T, s *Server, n int) {
	t.Helper()
	testutil.WaitFor(t, "the acks", func() bool { return len(s.Acks()) >= n })
	if late := s.Unacknowledged(3 * time.Second); len(late) > 0 {
		t.Fatalf("envelopes not acknowledged within 3s: %v (acks %+v)", late, s.Acks())
	}
}

func TestSocketModeDM(t *testing.T) {
	s := New(Options{})
	t.Cleanup(s.Close)
	c := runClient(t, s)
	c.next(t, socketmode.EventTypeHello)
	ts := s.InjectDM("U1", "hello there")
	outer, inner := c.nextInner(t)
	m, ok := inner.(*slackevents.MessageEvent)
	if !ok || m.Channel != "D1" || m.ChannelType != "im" || m.User != "U1" || m.Text != "hello there" || m.TimeStamp != ts || m.BotID != "" {
		t.Fatalf("DM event %T %+v", inner, inner)
	}
	cb, ok := outer.Data.(*slackevents.EventsAPICallbackEvent)
	if !ok || cb.EventID == "" || cb.TeamID != s.TeamID() {
		t.Fatalf("callback %+v", outer.Data)
	}
	ackedInTime(t, s, 1)
	env := s.Envelopes()
	if len(env) != 1 || env[0].Type != "events_api" || env[0].EventID != cb.EventID || env[0].Conn != 1 {
		t.Fatalf("envelopes %+v", env)
	}
	if a := s.Acks(); a[0].EnvelopeID != env[0].ID || a[0].Payload != nil {
		t.Fatalf("acks %+v", a)
	}
	if d, ok := s.AckDelays()[env[0].ID]; !ok || d <= 0 || d != s.Acks()[0].Delay {
		t.Fatalf("ack delays %v", s.AckDelays())
	}
}

func TestSocketModeMentionAndVariants(t *testing.T) {
	s := New(Options{})
	t.Cleanup(s.Close)
	c := runClient(t, s)
	c.next(t, socketmode.EventTypeHello)
	ts := s.InjectMention("C1", "U1", "what's up", "1700000000.000001")
	_, inner := c.nextInner(t)
	m, ok := inner.(*slackevents.AppMentionEvent)
	if !ok || m.Channel != "C1" || m.User != "U1" || m.Text != "<@U0BOT> what's up" || m.TimeStamp != ts || m.ThreadTimeStamp != "1700000000.000001" {
		t.Fatalf("mention %T %+v", inner, inner)
	}
	s.InjectMessage(Event{Channel: "C1", Subtype: "bot_message", BotID: "B9", Text: "from a bot"})
	_, inner = c.nextInner(t)
	if m, ok := inner.(*slackevents.MessageEvent); !ok || m.SubType != "bot_message" || m.BotID != "B9" || m.ChannelType != "channel" {
		t.Fatalf("bot message %+v", inner)
	}
	edited, _ := json.Marshal(map[string]string{"type": "message", "user": "U1", "text": "edited", "ts": ts})
	s.InjectMessage(Event{Channel: "D1", Subtype: "message_changed", Extra: map[string]json.RawMessage{"message": edited, "hidden": json.RawMessage("true")}})
	_, inner = c.nextInner(t)
	if m, ok := inner.(*slackevents.MessageEvent); !ok || m.SubType != "message_changed" || m.Message == nil || m.Message.Text != "edited" || m.ChannelType != "im" {
		t.Fatalf("edit %+v", inner)
	}
	ackedInTime(t, s, 3)
}

func TestSocketModeBlockAction(t *testing.T) {
	s := New(Options{})
	t.Cleanup(s.Close)
	c := runClient(t, s)
	c.next(t, socketmode.EventTypeHello)
	_, ts, err := c.api.PostMessage("C1", slack.MsgOptionText("approve?", false),
		slack.MsgOptionBlocks(approvalBlocks("tok1")...), slack.MsgOptionTS("1700000000.000001"))
	if err != nil {
		t.Fatal(err)
	}
	id := s.InjectBlockAction(BlockAction{User: "U2", Channel: "C1", MessageTS: ts, ActionID: "approve", Value: "tok1"})
	ev := c.next(t, socketmode.EventTypeInteractive)
	cb, ok := ev.Data.(slack.InteractionCallback)
	if !ok || ev.Request.EnvelopeID != id || cb.Type != slack.InteractionTypeBlockActions {
		t.Fatalf("interactive %T %+v", ev.Data, ev.Data)
	}
	acts := cb.ActionCallback.BlockActions
	if cb.User.ID != "U2" || cb.Channel.ID != "C1" || cb.Container.MessageTs != ts || cb.Container.ThreadTs != "1700000000.000001" ||
		cb.Message.Timestamp != ts || cb.Message.Text != "approve?" || cb.TriggerID == "" || cb.ResponseURL == "" ||
		len(acts) != 1 || acts[0].ActionID != "approve" || acts[0].BlockID != "approval" || acts[0].Value != "tok1" || acts[0].Text.Text != "Approve" {
		t.Fatalf("block_actions %+v", cb)
	}
	ackedInTime(t, s, 1)
	if _, _, err := c.api.PostMessage("", slack.MsgOptionReplaceOriginal(cb.ResponseURL), slack.MsgOptionText("approved", false)); err != nil {
		t.Fatal(err)
	}
	if r := s.ResponseURLPosts(); len(r) != 1 || r[0].URL != cb.ResponseURL || !r[0].ReplaceOriginal || r[0].Text != "approved" {
		t.Fatalf("response_url posts %+v", r)
	}
}

func TestSocketModeSlashCommand(t *testing.T) {
	s := New(Options{})
	t.Cleanup(s.Close)
	c := runClient(t, s)
	c.next(t, socketmode.EventTypeHello)
	id := s.InjectSlashCommand(SlashCommand{Command: "/approve", Text: "tok1 always", User: "U2", Channel: "D2"})
	ev := c.next(t, socketmode.EventTypeSlashCommand)
	cmd, ok := ev.Data.(slack.SlashCommand)
	if !ok || ev.Request.EnvelopeID != id || !ev.Request.AcceptsResponsePayload || cmd.Command != "/approve" || cmd.Text != "tok1 always" ||
		cmd.UserID != "U2" || cmd.ChannelID != "D2" || cmd.ResponseURL == "" || cmd.TriggerID == "" || cmd.TeamID != s.TeamID() {
		t.Fatalf("slash command %+v", ev.Data)
	}
	ackedInTime(t, s, 1)
	if a := s.Acks(); a[0].EnvelopeID != id || string(a[0].Payload) != `{"text":"acked tok1 always"}` {
		t.Fatalf("ack %+v payload %s", a[0], a[0].Payload)
	}
}

func TestUnacknowledgedEnvelopesAreReported(t *testing.T) {
	s := New(Options{})
	t.Cleanup(s.Close)
	c := runClient(t, s)
	c.next(t, socketmode.EventTypeHello)
	s.InjectDM("U1", "noack please")
	c.nextInner(t)
	s.InjectDM("U1", "ack this one")
	c.nextInner(t)
	testutil.WaitFor(t, "the second ack", func() bool { return len(s.Acks()) == 1 })
	env := s.Envelopes()
	if late := s.Unacknowledged(3 * time.Second); len(late) != 1 || late[0] != env[0].ID {
		t.Fatalf("unacknowledged %v, want only %s", late, env[0].ID)
	}
	if late := s.Unacknowledged(-1); len(late) != 2 {
		t.Fatalf("with no time allowed every envelope is late, got %v", late)
	}
}

func TestReconnectAfterDisconnectEnvelope(t *testing.T) {
	s := New(Options{DisconnectGrace: -1}) // the client, not the fake, must end the old socket
	t.Cleanup(s.Close)
	c := runClient(t, s)
	c.next(t, socketmode.EventTypeHello)
	s.Disconnect()
	testutil.WaitFor(t, "a second connection", func() bool { return s.Connections() == 2 })
	c.next(t, socketmode.EventTypeHello)
	testutil.WaitFor(t, "the old connection to end", func() bool { return s.Live() == 1 })
	s.InjectDM("U1", "still there?")
	if _, inner := c.nextInner(t); inner.(*slackevents.MessageEvent).Text != "still there?" {
		t.Fatalf("after the reconnect: %+v", inner)
	}
	if env := s.Envelopes(); env[len(env)-1].Conn != 2 {
		t.Fatalf("envelope went to connection %d", env[len(env)-1].Conn)
	}
	ackedInTime(t, s, 1)
}

func TestReconnectAfterDroppedSocket(t *testing.T) {
	s := New(Options{})
	t.Cleanup(s.Close)
	c := runClient(t, s)
	c.next(t, socketmode.EventTypeHello)
	s.DropConnection()
	s.InjectDM("U1", "sent while the socket was down") // waits for the next connection
	testutil.WaitFor(t, "a second connection", func() bool { return s.Connections() == 2 })
	if _, inner := c.nextInner(t); inner.(*slackevents.MessageEvent).Text != "sent while the socket was down" {
		t.Fatalf("after the drop: %+v", inner)
	}
	s.InjectDM("U1", "and after")
	if _, inner := c.nextInner(t); inner.(*slackevents.MessageEvent).Text != "and after" {
		t.Fatalf("after the drop: %+v", inner)
	}
	ackedInTime(t, s, 2)
	if n := s.Connections(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}

func TestMalformedFrameIsSkipped(t *testing.T) {
	s := New(Options{})
	t.Cleanup(s.Close)
	c := runClient(t, s)
	c.next(t, socketmode.EventTypeHello)
	s.InjectRaw(`{"type":"events_api","envelope_id":"bad","payload":{"type":"event_callback","event":[]}}`)
	c.next(t, socketmode.EventTypeErrorBadMessage)
	s.InjectDM("U1", "after the junk")
	if _, inner := c.nextInner(t); inner.(*slackevents.MessageEvent).Text != "after the junk" {
		t.Fatalf("after junk: %+v", inner)
	}
	if s.Connections() != 1 {
		t.Fatalf("a malformed frame cost a reconnect")
	}
}

// TestPingsKeepTheConnection waits for several of the client's ping
// intervals' worth of pings and checks it never reconnected; the control
// without pings shows the client does reconnect then.
func TestPingsKeepTheConnection(t *testing.T) {
	t.Run("pings", func(t *testing.T) {
		s := New(Options{PingInterval: 20 * time.Millisecond})
		t.Cleanup(s.Close)
		c := runClient(t, s, socketmode.OptionPingInterval(time.Second))
		c.next(t, socketmode.EventTypeHello)
		// 120 pongs span at least 2.4 s: two of the client's checks.
		testutil.WaitFor(t, "120 pongs", func() bool { return s.Pongs() >= 120 })
		if n := s.Connections(); n != 1 {
			t.Fatalf("%d connections with pings", n)
		}
	})
	t.Run("no pings", func(t *testing.T) {
		s := New(Options{PingInterval: -1})
		t.Cleanup(s.Close)
		c := runClient(t, s, socketmode.OptionPingInterval(200*time.Millisecond))
		c.next(t, socketmode.EventTypeHello)
		testutil.WaitFor(t, "a reconnect for want of pings", func() bool { return s.Connections() >= 2 })
		if s.Pongs() != 0 {
			t.Fatal("pongs without pings")
		}
	})
}

func TestEchoPosts(t *testing.T) {
	s := New(Options{EchoPosts: true})
	t.Cleanup(s.Close)
	c := runClient(t, s)
	c.next(t, socketmode.EventTypeHello)
	_, ts, err := c.api.PostMessage("D1", slack.MsgOptionText("my reply", false))
	if err != nil {
		t.Fatal(err)
	}
	_, inner := c.nextInner(t)
	m, ok := inner.(*slackevents.MessageEvent)
	if !ok || m.BotID != s.BotID() || m.User != s.BotUserID() || m.TimeStamp != ts || m.Text != "my reply" {
		t.Fatalf("echo %+v", inner)
	}
}

func TestRedeliverUnacknowledgedEvents(t *testing.T) {
	s := New(Options{})
	t.Cleanup(s.Close)
	c := runClient(t, s)
	c.next(t, socketmode.EventTypeHello)
	s.InjectDM("U1", "noack: first")
	first, _ := c.nextInner(t)
	s.InjectDM("U1", "acked")
	c.nextInner(t)
	testutil.WaitFor(t, "the ack of the second", func() bool { return len(s.Acks()) == 1 })
	ids := s.Redeliver()
	if len(ids) != 1 {
		t.Fatalf("redelivered %v, want only the unacknowledged one", ids)
	}
	ev := c.next(t, socketmode.EventTypeEventsAPI)
	again := ev.Data.(slackevents.EventsAPIEvent)
	if ev.Request.EnvelopeID != ids[0] || ev.Request.RetryAttempt != 1 || ev.Request.RetryReason != "timeout" ||
		again.Data.(*slackevents.EventsAPICallbackEvent).EventID != first.Data.(*slackevents.EventsAPICallbackEvent).EventID {
		t.Fatalf("redelivery %+v", ev.Request)
	}
	for attempt := 2; attempt <= 3; attempt++ {
		if ids := s.Redeliver(); len(ids) != 1 {
			t.Fatalf("retry %d: redelivered %v", attempt, ids)
		}
		if ev := c.next(t, socketmode.EventTypeEventsAPI); ev.Request.RetryAttempt != attempt {
			t.Fatalf("retry_attempt %d, want %d", ev.Request.RetryAttempt, attempt)
		}
	}
	if ids := s.Redeliver(); len(ids) != 0 {
		t.Fatalf("a fourth retry: %v", ids)
	}
}

func TestConnectionsOpenFaultsAreRetried(t *testing.T) {
	s := New(Options{RetryAfter: 1})
	t.Cleanup(s.Close)
	s.FailNext("apps.connections.open", 1, FaultRateLimited)
	s.FailNext("apps.connections.open", 1, FaultServer)
	c := runClient(t, s)
	c.next(t, socketmode.EventTypeHello)
	if n := s.Calls("apps.connections.open"); n != 3 || s.Connections() != 1 {
		t.Fatalf("%d apps.connections.open calls, %d connections", n, s.Connections())
	}
	if s.Early() != 0 {
		t.Fatal("slack-go reconnected before the Retry-After had passed")
	}
	s.InjectDM("U1", "connected at last")
	if _, inner := c.nextInner(t); inner.(*slackevents.MessageEvent).Text != "connected at last" {
		t.Fatalf("%+v", inner)
	}
}
