package discord

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func TestOpenReadyAndIdentify(t *testing.T) {
	t.Parallel()
	for _, compress := range []bool{false, true} {
		s := Start(t, Options{Compress: compress})
		dg := open(t, s, nil)
		if dg.State.User == nil || dg.State.User.ID != s.Bot().ID || !dg.State.User.Bot {
			t.Fatalf("compress %v: State.User = %+v", compress, dg.State.User)
		}
		if dg.State.Application == nil || dg.State.Application.ID != s.AppID() {
			t.Fatalf("compress %v: READY application %+v", compress, dg.State.Application)
		}
		ids := s.Identifies()
		if len(ids) != 1 || ids[0].Intents != int(intents) || !ids[0].Compress || ids[0].SessionID == "" {
			t.Fatalf("compress %v: identifies %+v", compress, ids)
		}
		if s.Connections() != 1 || s.Connected() != 1 {
			t.Fatalf("compress %v: %d connections, %d connected", compress, s.Connections(), s.Connected())
		}
		got := collect[*discordgo.MessageCreate](dg)
		s.InjectMessage(Message{ChannelID: dmCh, Author: ann, Content: "after READY"})
		testutil.WaitFor(t, "the message", func() bool { return got.len() == 1 })
	}
}

func TestMessageCreateDispatch(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	var got *events[*discordgo.MessageCreate]
	dg := open(t, s, func(dg *discordgo.Session) { got = collect[*discordgo.MessageCreate](dg) })
	dm := s.InjectMessage(Message{ChannelID: dmCh, Author: ann, Content: "hello in private"})
	mention := "<@" + s.Bot().ID + "> deploy please"
	g := s.InjectMessage(Message{
		ChannelID: gCh, GuildID: gld, Author: bob, Content: mention, ReplyTo: dm,
		Attachments: []Attachment{{Filename: "log.txt", Size: 12}},
	})
	testutil.WaitFor(t, "two messages", func() bool { return got.len() == 2 })
	a, b := got.all()[0], got.all()[1]
	if a.ID != dm || a.ChannelID != dmCh || a.GuildID != "" || a.Author.ID != ann.ID || a.Content != "hello in private" || a.Member != nil {
		t.Fatalf("DM %+v", a.Message)
	}
	if b.ID != g || b.GuildID != gld || b.Member == nil || b.Content != mention || len(b.Mentions) != 1 || b.Mentions[0].ID != s.Bot().ID {
		t.Fatalf("guild message %+v", b.Message)
	}
	if b.MessageReference == nil || b.MessageReference.MessageID != dm || b.ReferencedMessage == nil || b.ReferencedMessage.Content != "hello in private" {
		t.Fatalf("reply reference %+v / %+v", b.MessageReference, b.ReferencedMessage)
	}
	if len(b.Attachments) != 1 || b.Attachments[0].Filename != "log.txt" || b.Attachments[0].ID == "" {
		t.Fatalf("attachments %+v", b.Attachments)
	}
	if _, err := dg.ChannelMessageSend(gCh, "on it"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the echo of the bot's own message", func() bool { return got.len() == 3 })
	if echo := got.all()[2]; echo.Author.ID != s.Bot().ID || !echo.Author.Bot || echo.Content != "on it" {
		t.Fatalf("echo %+v", echo.Message)
	}
}

func TestIntentsFilterDispatches(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	var got *events[*discordgo.MessageCreate]
	open(t, s, func(dg *discordgo.Session) {
		dg.Identify.Intents = discordgo.IntentsGuildMessages // no DMs, no message content
		got = collect[*discordgo.MessageCreate](dg)
	})
	s.InjectMessage(Message{ChannelID: dmCh, Author: ann, Content: "dm"})
	s.InjectMessage(Message{ChannelID: gCh, GuildID: gld, Author: ann, Content: "secret"})
	s.InjectMessage(Message{ChannelID: gCh, GuildID: gld, Author: ann, Content: "<@" + s.Bot().ID + "> hi"})
	testutil.WaitFor(t, "the guild messages", func() bool { return got.len() == 2 })
	all := got.all()
	if all[0].Content != "" || all[0].GuildID != gld {
		t.Fatalf("without the Message Content intent the first guild message is %+v; want it without content", all[0].Message)
	}
	if all[1].Content == "" {
		t.Fatal("a message mentioning the bot lost its content")
	}
}

func TestInteractionsDeadlineAndAnswerOnce(t *testing.T) {
	t.Parallel()
	clk := newClock()
	s := Start(t, Options{Now: clk.Now})
	var got *events[*discordgo.InteractionCreate]
	dg := open(t, s, func(dg *discordgo.Session) { got = collect[*discordgo.InteractionCreate](dg) })
	req, err := dg.ChannelMessageSendComplex(gCh, &discordgo.MessageSend{Content: "approve?", Components: []discordgo.MessageComponent{
		discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.Button{Label: "Approve", Style: 3, CustomID: "ap:tok"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	first := s.InjectButtonPress(Press{ChannelID: gCh, GuildID: gld, MessageID: req.ID, User: ann, CustomID: "ap:tok"})
	testutil.WaitFor(t, "the press", func() bool { return got.len() == 1 })
	in := got.all()[0].Interaction
	if in.ID != first.ID || in.Token != first.Token || in.Type != discordgo.InteractionMessageComponent ||
		in.MessageComponentData().CustomID != "ap:tok" || in.Member == nil || in.Member.User.ID != ann.ID ||
		in.Message == nil || in.Message.ID != req.ID || in.GuildID != gld || in.AppID != s.AppID() {
		t.Fatalf("interaction %+v", in)
	}
	clk.Advance(time.Second)
	update := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseUpdateMessage, Data: &discordgo.InteractionResponseData{
		Content: "approved by ann", Components: []discordgo.MessageComponent{},
	}}
	if err := dg.InteractionRespond(in, update); err != nil {
		t.Fatalf("answer within 3s: %v", err)
	}
	restError(t, dg.InteractionRespond(in, update), http.StatusBadRequest, 40060)
	if cur, _ := s.Message(req.ID); cur.Content != "approved by ann" || len(cur.Components) != 0 {
		t.Fatalf("type 7 left the message as %+v", cur)
	}

	s.InjectButtonPress(Press{ChannelID: dmCh, MessageID: req.ID, User: bob, CustomID: "ap:tok"})
	testutil.WaitFor(t, "the second press", func() bool { return got.len() == 2 })
	late := got.all()[1].Interaction
	if late.User == nil || late.User.ID != bob.ID || late.Member != nil {
		t.Fatalf("DM press carries user %+v, member %+v", late.User, late.Member)
	}
	clk.Advance(3*time.Second + time.Millisecond)
	restError(t, dg.InteractionRespond(late, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}), http.StatusNotFound, 10062)

	rs := s.InteractionResponses()
	if len(rs) != 3 || rs[0].Code != 0 || rs[0].After != time.Second || rs[0].Type != 7 ||
		rs[1].Code != 40060 || rs[2].Code != 10062 || rs[2].After <= 3*time.Second {
		t.Fatalf("responses %+v", rs)
	}
}

func TestInteractionReplyFollowupAndEditOriginal(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	var got *events[*discordgo.InteractionCreate]
	dg := open(t, s, func(dg *discordgo.Session) { got = collect[*discordgo.InteractionCreate](dg) })
	if _, err := dg.ApplicationCommandBulkOverwrite(s.AppID(), "", []*discordgo.ApplicationCommand{{
		Name: "approve", Description: "Approve", Options: []*discordgo.ApplicationCommandOption{
			{Type: discordgo.ApplicationCommandOptionString, Name: "token", Description: "t", Required: true}},
	}}); err != nil {
		t.Fatal(err)
	}
	s.InjectSlashCommand(SlashCommand{ChannelID: gCh, GuildID: gld, User: ann, Name: "approve",
		Options: []OptionValue{{Name: "token", Type: 3, Value: "K7Q2"}}})
	testutil.WaitFor(t, "the command", func() bool { return got.len() == 1 })
	in := got.all()[0].Interaction
	data := in.ApplicationCommandData()
	if in.Type != discordgo.InteractionApplicationCommand || data.Name != "approve" || data.ID != s.Commands("")[0].ID ||
		len(data.Options) != 1 || data.Options[0].StringValue() != "K7Q2" {
		t.Fatalf("command interaction %+v, data %+v", in, data)
	}
	if _, err := dg.FollowupMessageCreate(in, true, &discordgo.WebhookParams{Content: "too early"}); err == nil {
		t.Fatal("a follow-up before the callback was accepted")
	}
	if err := dg.InteractionRespond(in, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: "Only approvers may approve.", Flags: discordgo.MessageFlagsEphemeral}}); err != nil {
		t.Fatal(err)
	}
	edited := "Approved."
	if _, err := dg.InteractionResponseEdit(in, &discordgo.WebhookEdit{Content: &edited}); err != nil {
		t.Fatal(err)
	}
	f, err := dg.FollowupMessageCreate(in, true, &discordgo.WebhookParams{Content: "done", Flags: discordgo.MessageFlagsEphemeral})
	if err != nil || f.ID == "" {
		t.Fatalf("follow-up %+v, %v", f, err)
	}
	msgs := s.Messages(gCh)
	if len(msgs) != 2 || msgs[0].Via != ViaInteraction || msgs[0].Flags&FlagEphemeral == 0 || msgs[0].Interaction != in.ID ||
		msgs[1].Via != ViaFollowup || msgs[1].Content != "done" || msgs[1].Flags != FlagEphemeral {
		t.Fatalf("messages %+v", msgs)
	}
	if cur, _ := s.Message(msgs[0].ID); cur.Content != edited {
		t.Fatalf("@original after the edit: %+v", cur)
	}
	if ed := s.Edits(); len(ed) != 1 || ed[0].Via != ViaInteraction || ed[0].MessageID != msgs[0].ID {
		t.Fatalf("edits %+v", ed)
	}
}

func TestReconnectOp7Resumes(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	var got *events[*discordgo.MessageCreate]
	open(t, s, func(dg *discordgo.Session) { got = collect[*discordgo.MessageCreate](dg) })
	s.InjectMessage(Message{ChannelID: dmCh, Author: ann, Content: "one"})
	testutil.WaitFor(t, "the first message", func() bool { return got.len() == 1 })
	s.SendReconnect()
	t.Cleanup(func() {
		if t.Failed() { // what discordgo did instead, for the next reader
			t.Logf("connections %d, connected %d, resumes %+v, identifies %d", s.Connections(), s.Connected(), s.Resumes(), len(s.Identifies()))
		}
	})
	testutil.WaitFor(t, "a resumed second connection", func() bool {
		r := s.Resumes()
		return s.Connections() == 2 && len(r) == 1 && r[0].OK && s.Connected() == 1
	})
	s.InjectMessage(Message{ChannelID: dmCh, Author: ann, Content: "two"})
	testutil.WaitFor(t, "the message after the reconnect", func() bool { return got.len() == 2 })
	if n := len(s.Identifies()); n != 1 {
		t.Fatalf("%d identifies; a RESUME needs none", n)
	}
}

func TestDroppedSocketResumesWithoutLoss(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	var got *events[*discordgo.MessageCreate]
	open(t, s, func(dg *discordgo.Session) { got = collect[*discordgo.MessageCreate](dg) })
	s.DropConnection()
	s.InjectMessage(Message{ChannelID: dmCh, Author: ann, Content: "sent while down"})
	testutil.WaitFor(t, "the message, live or replayed", func() bool { return got.len() == 1 })
	testutil.WaitFor(t, "the resumed connection", func() bool {
		r := s.Resumes()
		return s.Connections() == 2 && len(r) == 1 && r[0].OK
	})
	if got.all()[0].Content != "sent while down" {
		t.Fatalf("got %+v", got.all()[0].Message)
	}
}

func TestMissedHeartbeatAcksMakeItReconnect(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{HeartbeatInterval: 20 * time.Millisecond})
	var got *events[*discordgo.MessageCreate]
	open(t, s, func(dg *discordgo.Session) { got = collect[*discordgo.MessageCreate](dg) })
	testutil.WaitFor(t, "heartbeats", func() bool { return s.Heartbeats() >= 2 })
	s.SetHeartbeatAcks(false)
	testutil.WaitFor(t, "a second connection", func() bool { return s.Connections() >= 2 })
	s.SetHeartbeatAcks(true)
	// discordgo closed with 1000, which ends the session: its RESUME is
	// refused and it identifies again.
	testutil.WaitFor(t, "a new session", func() bool { return len(s.Identifies()) >= 2 && s.Connected() == 1 })
	if r := s.Resumes(); len(r) == 0 || r[0].OK {
		t.Fatalf("resumes %+v; want the first refused", r)
	}
	s.InjectMessage(Message{ChannelID: dmCh, Author: ann, Content: "still here"})
	testutil.WaitFor(t, "the message after the reconnect", func() bool { return got.len() >= 1 })
}

func TestInvalidSessionReidentifies(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	var got *events[*discordgo.MessageCreate]
	open(t, s, func(dg *discordgo.Session) { got = collect[*discordgo.MessageCreate](dg) })
	s.SendInvalidSession(false)
	testutil.WaitFor(t, "a second IDENTIFY", func() bool { return len(s.Identifies()) == 2 && s.Connected() == 1 })
	s.InjectMessage(Message{ChannelID: dmCh, Author: ann, Content: "after op 9"})
	testutil.WaitFor(t, "the message", func() bool { return got.len() == 1 })
	if s.Connections() != 1 {
		t.Fatalf("%d connections; discordgo re-identifies on the same socket", s.Connections())
	}
}

func TestMalformedDispatchIsSurvived(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	var got *events[*discordgo.MessageCreate]
	open(t, s, func(dg *discordgo.Session) { got = collect[*discordgo.MessageCreate](dg) })
	s.InjectDispatch("MESSAGE_CREATE", []byte(`{"id":"1","content":`))
	s.InjectMessage(Message{ChannelID: dmCh, Author: ann, Content: "valid"})
	testutil.WaitFor(t, "the valid message", func() bool {
		for _, m := range got.all() {
			if m.Content == "valid" {
				return true
			}
		}
		return false
	})
	if s.Connections() != 1 {
		t.Fatalf("%d connections after a malformed frame", s.Connections())
	}
}

// raw is a bare websocket client speaking the gateway protocol.
type raw struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialRaw(t *testing.T, s *Server) *raw {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial(s.GatewayURL()+"/?v=9&encoding=json", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	r := &raw{t: t, ws: ws}
	if hello := r.read(); hello.Op != 10 || !strings.Contains(string(hello.D), `"heartbeat_interval":41250`) {
		t.Fatalf("first frame %+v; want HELLO", hello)
	}
	return r
}

type gwFrame struct {
	Op int             `json:"op"`
	S  int64           `json:"s"`
	T  string          `json:"t"`
	D  json.RawMessage `json:"d"`
}

func (r *raw) read() gwFrame {
	r.t.Helper()
	_ = r.ws.SetReadDeadline(time.Now().Add(testutil.HangGuard))
	_, b, err := r.ws.ReadMessage()
	if err != nil {
		r.t.Fatalf("read: %v", err)
	}
	var f gwFrame
	if err := json.Unmarshal(b, &f); err != nil {
		r.t.Fatalf("frame %s: %v", b, err)
	}
	return f
}

func (r *raw) send(op int, d any) {
	r.t.Helper()
	if err := r.ws.WriteJSON(map[string]any{"op": op, "d": d}); err != nil {
		r.t.Fatal(err)
	}
}

func TestResumeReplaysMissedDispatches(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	c := dialRaw(t, s)
	c.send(2, map[string]any{"token": s.Token(), "intents": int(intents), "properties": map[string]string{"os": "linux"}})
	ready := c.read()
	var rd struct {
		SessionID string `json:"session_id"`
		Resume    string `json:"resume_gateway_url"`
	}
	_ = json.Unmarshal(ready.D, &rd)
	if ready.T != "READY" || ready.S != 1 || rd.SessionID == "" || rd.Resume != s.GatewayURL() {
		t.Fatalf("READY %+v", ready)
	}
	c.send(1, 1)
	if ack := c.read(); ack.Op != 11 {
		t.Fatalf("heartbeat answered %+v", ack)
	}
	s.InjectMessage(Message{ChannelID: dmCh, Author: ann, Content: "a"})
	s.InjectMessage(Message{ChannelID: dmCh, Author: ann, Content: "b"})
	if f := c.read(); f.S != 2 || f.T != "MESSAGE_CREATE" {
		t.Fatalf("first dispatch %+v", f)
	}
	c.read() // seq 3, "b": read but, as far as RESUME says, not processed
	s.DropConnection()
	testutil.WaitFor(t, "the drop noticed", func() bool { return s.Connected() == 0 })
	s.InjectMessage(Message{ChannelID: dmCh, Author: ann, Content: "c"})

	c2 := dialRaw(t, s)
	c2.send(6, map[string]any{"token": "Bot " + s.Token(), "session_id": rd.SessionID, "seq": 2})
	for i, want := range []string{"b", "c"} {
		f := c2.read()
		if f.T != "MESSAGE_CREATE" || f.S != int64(3+i) || !strings.Contains(string(f.D), `"content":"`+want+`"`) {
			t.Fatalf("replay %d: %+v", i, f)
		}
	}
	if f := c2.read(); f.T != "RESUMED" {
		t.Fatalf("after the replay %+v; want RESUMED", f)
	}
	if r := s.Resumes(); len(r) != 1 || !r[0].OK || r[0].Replayed != 2 || r[0].Seq != 2 {
		t.Fatalf("resumes %+v", r)
	}

	c3 := dialRaw(t, s)
	c3.send(6, map[string]any{"token": s.Token(), "session_id": "nope", "seq": 2})
	if f := c3.read(); f.Op != 9 || string(f.D) != "false" {
		t.Fatalf("unknown session answered %+v; want INVALID_SESSION", f)
	}
}

func TestGatewayCloseCodes(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	for _, tc := range []struct {
		name string
		op   int
		d    any
		code int
	}{
		{"wrong token", 2, map[string]any{"token": "nope", "intents": 0}, 4004},
		{"unknown op", 42, nil, 4001},
		{"presence before identify", 3, map[string]any{}, 4003},
	} {
		c := dialRaw(t, s)
		c.send(tc.op, tc.d)
		_, _, err := c.ws.ReadMessage()
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != tc.code {
			t.Fatalf("%s: %v; want close %d", tc.name, err, tc.code)
		}
	}
}

func TestCloseEndsGatewaySockets(t *testing.T) {
	t.Parallel()
	s := New(Options{})
	c := dialRaw(t, s)
	s.Close()
	_ = c.ws.SetReadDeadline(time.Now().Add(testutil.HangGuard))
	if _, _, err := c.ws.ReadMessage(); err == nil {
		t.Fatal("the socket outlived Close")
	}
	s.Close() // idempotent
}

func TestDispatchesBeforeTheFirstSessionWaitForIt(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{NoEcho: true})
	early := s.InjectMessage(Message{ChannelID: dmCh, Author: ann, Content: "before Open"})
	var got *events[*discordgo.MessageCreate]
	dg := open(t, s, func(dg *discordgo.Session) { got = collect[*discordgo.MessageCreate](dg) })
	if _, err := dg.ChannelMessageSend(dmCh, "not echoed"); err != nil {
		t.Fatal(err)
	}
	s.InjectMessage(Message{ChannelID: dmCh, Author: ann, Content: "after"})
	testutil.WaitFor(t, "both injected messages", func() bool { return got.len() >= 2 })
	all := got.all()
	if len(all) != 2 || all[0].ID != early || all[1].Content != "after" {
		t.Fatalf("got %d messages, first %+v; want the early one, then the later one, and no echo", len(all), all[0].Message)
	}
}
