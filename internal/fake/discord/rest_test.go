package discord

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
)

func TestTransportRewritesDiscordURLs(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	req, _ := http.NewRequest(http.MethodGet, "https://discord.com/api/v9/users/@me", nil)
	req.Header.Set("Authorization", "Bot "+s.Token())
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"id":"`+s.Bot().ID+`"`) {
		t.Fatalf("GET /users/@me through the transport: %d %s", resp.StatusCode, body)
	}
	if req.URL.Host != "discord.com" {
		t.Fatalf("the transport changed the caller's request: %s", req.URL)
	}
}

func TestUsersMeAndWrongToken(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	me, err := client(t, s, s.Token()).User("@me")
	if err != nil || me.ID != s.Bot().ID || !me.Bot {
		t.Fatalf("/users/@me = %+v, %v", me, err)
	}
	_, err = client(t, s, "wrong-token").User("@me")
	restError(t, err, http.StatusUnauthorized, 0)
	if err := client(t, s, "wrong-token").Open(); err == nil {
		t.Fatal("Open with a wrong token succeeded")
	}
}

func TestDMChannelIsStable(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	dg := client(t, s, s.Token())
	ch, err := dg.UserChannelCreate(ann.ID)
	if err != nil || ch.ID == "" || ch.Type != discordgo.ChannelTypeDM || len(ch.Recipients) != 1 || ch.Recipients[0].ID != ann.ID {
		t.Fatalf("DM channel %+v, %v", ch, err)
	}
	again, err := dg.UserChannelCreate(ann.ID)
	if err != nil || again.ID != ch.ID || s.DMChannel(ann.ID) != ch.ID {
		t.Fatalf("second DM channel %+v, %v; want %s again", again, err, ch.ID)
	}
	if _, err := dg.ChannelMessageSend(ch.ID, "approval needed"); err != nil {
		t.Fatal(err)
	}
	if m := s.Messages(ch.ID); len(m) != 1 || m[0].GuildID != "" {
		t.Fatalf("DM messages %+v", m)
	}
}

func TestGatewayBot(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	gb, err := client(t, s, s.Token()).GatewayBot()
	if err != nil || gb.URL != s.GatewayURL()+"/" || gb.Shards != 1 {
		t.Fatalf("GatewayBot = %+v, %v", gb, err)
	}
}

func TestSendComplexWithReferenceAndComponents(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	dg := client(t, s, s.Token())
	asked := s.InjectMessage(Message{ChannelID: gCh, GuildID: gld, Author: ann, Content: "run it"})
	rows := []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
		discordgo.Button{Label: "Approve", Style: discordgo.SuccessButton, CustomID: "ap:1"},
		discordgo.Button{Label: "Deny", Style: discordgo.DangerButton, CustomID: "dn:1"},
	}}}
	m, err := dg.ChannelMessageSendComplex(gCh, &discordgo.MessageSend{
		Content:         "Approve `rm -rf build`?",
		Reference:       &discordgo.MessageReference{MessageID: asked, ChannelID: gCh},
		Components:      rows,
		AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.ID == "" || m.GuildID != gld || m.Author.ID != s.Bot().ID || m.ReferencedMessage == nil || m.ReferencedMessage.Content != "run it" {
		t.Fatalf("returned message %+v", m)
	}
	got := s.Messages(gCh)
	if len(got) != 1 {
		t.Fatalf("recorded %d messages", len(got))
	}
	g := got[0]
	if g.ID != m.ID || g.Content != "Approve `rm -rf build`?" || g.Reference == nil || g.Reference.MessageID != asked || g.Via != ViaChannel {
		t.Fatalf("recorded %+v", g)
	}
	if b := Buttons(g.Components); len(b) != 2 || b[0].CustomID != "ap:1" || b[0].Style != 3 || b[1].Label != "Deny" {
		t.Fatalf("recorded buttons %+v", b)
	}
	if g.AllowedMentions == nil || len(g.AllowedMentions.Parse) != 0 {
		t.Fatalf("recorded allowed_mentions %+v", g.AllowedMentions)
	}
	if _, err := dg.ChannelMessageSendReply(gCh, "hi", &discordgo.MessageReference{MessageID: "999"}); err == nil {
		t.Fatal("a reply to an unknown message was accepted")
	} else {
		restError(t, err, http.StatusBadRequest, 50035)
	}
}

func TestContentAndComponentRules(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	dg := client(t, s, s.Token())
	btn := func(id string) discordgo.MessageComponent {
		return discordgo.Button{Label: "ok", Style: discordgo.PrimaryButton, CustomID: id}
	}
	row := func(bs ...discordgo.MessageComponent) discordgo.MessageComponent {
		return discordgo.ActionsRow{Components: bs}
	}
	rows := func(n int) []discordgo.MessageComponent {
		var out []discordgo.MessageComponent
		for i := range n {
			out = append(out, row(btn(strings.Repeat("x", i+1))))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		msg  discordgo.MessageSend
		code int // 0: accepted
	}{
		{"2000 characters", discordgo.MessageSend{Content: strings.Repeat("é", 2000)}, 0},
		{"2001 characters", discordgo.MessageSend{Content: strings.Repeat("a", 2001)}, 50035},
		{"empty", discordgo.MessageSend{}, 50006},
		{"five rows", discordgo.MessageSend{Content: "x", Components: rows(5)}, 0},
		{"six rows", discordgo.MessageSend{Content: "x", Components: rows(6)}, 50035},
		{"six buttons", discordgo.MessageSend{Content: "x", Components: []discordgo.MessageComponent{
			row(btn("a"), btn("b"), btn("c"), btn("d"), btn("e"), btn("f"))}}, 50035},
		{"custom_id 100", discordgo.MessageSend{Content: "x", Components: []discordgo.MessageComponent{row(btn(strings.Repeat("i", 100)))}}, 0},
		{"custom_id 101", discordgo.MessageSend{Content: "x", Components: []discordgo.MessageComponent{row(btn(strings.Repeat("i", 101)))}}, 50035},
		{"duplicate custom_id", discordgo.MessageSend{Content: "x", Components: []discordgo.MessageComponent{row(btn("a"), btn("a"))}}, 50035},
		{"no label", discordgo.MessageSend{Content: "x", Components: []discordgo.MessageComponent{
			row(discordgo.Button{Style: discordgo.PrimaryButton, CustomID: "a"})}}, 50035},
		{"bad style", discordgo.MessageSend{Content: "x", Components: []discordgo.MessageComponent{
			row(discordgo.Button{Label: "a", Style: 9, CustomID: "a"})}}, 50035},
		{"button outside a row", discordgo.MessageSend{Content: "x", Components: []discordgo.MessageComponent{btn("a")}}, 50035},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(s.Sent())
			_, err := dg.ChannelMessageSendComplex(gCh, &tc.msg)
			if tc.code == 0 {
				if err != nil || len(s.Sent()) != before+1 {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			restError(t, err, http.StatusBadRequest, tc.code)
			if len(s.Sent()) != before {
				t.Fatal("a refused message was recorded")
			}
		})
	}
}

func TestEditMessage(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	dg := client(t, s, s.Token())
	m, err := dg.ChannelMessageSendComplex(gCh, &discordgo.MessageSend{Content: "pending", Components: []discordgo.MessageComponent{
		discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.Button{Label: "Approve", Style: 3, CustomID: "a"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	done := "approved by ann"
	none := []discordgo.MessageComponent{}
	e, err := dg.ChannelMessageEditComplex(&discordgo.MessageEdit{ID: m.ID, Channel: gCh, Content: &done, Components: &none})
	if err != nil || e.Content != done || len(e.Components) != 0 || e.EditedTimestamp == nil {
		t.Fatalf("edit = %+v, %v", e, err)
	}
	if cur, _ := s.Message(m.ID); cur.Content != done || len(cur.Components) != 0 {
		t.Fatalf("state after the edit %+v", cur)
	}
	if ed := s.Edits(); len(ed) != 1 || ed[0].MessageID != m.ID || !ed[0].ContentSet || !ed[0].ComponentsSet {
		t.Fatalf("edits %+v", ed)
	}
	_, err = dg.ChannelMessageEdit(gCh, "123", "x")
	restError(t, err, http.StatusNotFound, 10008)
	_, err = dg.ChannelMessageEdit(dmCh, m.ID, "x")
	restError(t, err, http.StatusNotFound, 10008)
	theirs := s.InjectMessage(Message{ChannelID: gCh, GuildID: gld, Author: ann, Content: "mine"})
	_, err = dg.ChannelMessageEdit(gCh, theirs, "x")
	restError(t, err, http.StatusForbidden, 50005)
	long := strings.Repeat("a", 2001)
	_, err = dg.ChannelMessageEditComplex(&discordgo.MessageEdit{ID: m.ID, Channel: gCh, Content: &long})
	restError(t, err, http.StatusBadRequest, 50035)
}

func TestTyping(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	if err := client(t, s, s.Token()).ChannelTyping(dmCh); err != nil {
		t.Fatal(err)
	}
	if ty := s.Typing(); len(ty) != 1 || ty[0].ChannelID != dmCh {
		t.Fatalf("typing %+v", ty)
	}
}

func TestRateLimitStormIsRetriedByDiscordgo(t *testing.T) {
	t.Parallel()
	for _, f := range []Fault{FaultTooMany, FaultTooManyGlobal} {
		s := Start(t, Options{})
		dg := client(t, s, s.Token())
		s.FailNext(RouteCreateMessage, 3, f)
		s.FailNext(RouteAny, 2, f)
		for i := range 5 {
			if _, err := dg.ChannelMessageSend(dmCh, strings.Repeat("m", i+1)); err != nil {
				t.Fatalf("fault %d, message %d: %v", f, i, err)
			}
		}
		got := s.Messages(dmCh)
		if len(got) != 5 {
			t.Fatalf("fault %d: %d messages landed; want 5, each once", f, len(got))
		}
		for i, m := range got {
			if m.Content != strings.Repeat("m", i+1) {
				t.Fatalf("fault %d: message %d is %q: out of order", f, i, m.Content)
			}
		}
		if n := s.Calls(RouteCreateMessage); n != 10 {
			t.Fatalf("fault %d: %d calls; want 5 refused and 5 accepted", f, n)
		}
		if n := s.Early(); n != 0 {
			t.Fatalf("fault %d: %d requests came before retry_after passed", f, n)
		}
	}
}

func TestRateLimitWireFormat(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	s.FailNext(RouteTyping, 1, FaultTooMany)
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/api/v9/channels/"+dmCh+"/typing", nil)
	req.Header.Set("Authorization", "Bot "+s.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	want := `{"global":false,"message":"You are being rate limited.","retry_after":0.05}`
	if resp.StatusCode != http.StatusTooManyRequests || string(body) != want {
		t.Fatalf("429 answer %d %s; want %s", resp.StatusCode, body, want)
	}
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Reset-After", "X-RateLimit-Bucket", "Retry-After"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("429 without %s", h)
		}
	}
}

func TestServerErrorsAndMalformedBodies(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	dg := client(t, s, s.Token())
	s.FailNext(RouteCreateMessage, 1, FaultServer)
	_, err := dg.ChannelMessageSend(dmCh, "a")
	restError(t, err, http.StatusInternalServerError, 0)
	s.FailNext(RouteCreateMessage, 2, FaultBadGateway) // discordgo retries 502 itself
	if _, err := dg.ChannelMessageSend(dmCh, "b"); err != nil {
		t.Fatalf("after two 502s: %v", err)
	}
	s.FailNext(RouteCreateMessage, 1, FaultMalformed)
	if _, err := dg.ChannelMessageSend(dmCh, "c"); !errors.Is(err, discordgo.ErrJSONUnmarshal) {
		t.Fatalf("malformed body: %v", err)
	}
	if got := s.Messages(dmCh); len(got) != 1 || got[0].Content != "b" {
		t.Fatalf("messages %+v; want only b", got)
	}
	resp, err := s.Client().Post(s.URL()+"/api/v9/channels/1/messages", "application/json", strings.NewReader(`{"content":`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no Authorization header: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/api/v9/channels/1/messages", strings.NewReader(`{"content":`))
	req.Header.Set("Authorization", "Bot "+s.Token())
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("malformed JSON request: %d", resp.StatusCode)
	}
}

func TestApplicationCommands(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	dg := client(t, s, s.Token())
	cmds := []*discordgo.ApplicationCommand{
		{Name: "approve", Description: "Approve a pending action", Options: []*discordgo.ApplicationCommandOption{
			{Type: discordgo.ApplicationCommandOptionString, Name: "token", Description: "the token", Required: true},
			{Type: discordgo.ApplicationCommandOptionBoolean, Name: "always", Description: "approve always"},
		}},
		{Name: "pending", Description: "List pending approvals"},
	}
	got, err := dg.ApplicationCommandBulkOverwrite(s.AppID(), "", cmds)
	if err != nil || len(got) != 2 || got[0].ID == "" || got[0].ApplicationID != s.AppID() || len(got[0].Options) != 2 {
		t.Fatalf("bulk overwrite = %+v, %v", got, err)
	}
	if reg := s.Commands(""); len(reg) != 2 || reg[0].ID != got[0].ID || reg[1].Name != "pending" {
		t.Fatalf("registered %+v", reg)
	}
	again, err := dg.ApplicationCommandBulkOverwrite(s.AppID(), "", cmds[:1])
	if err != nil || len(again) != 1 || again[0].ID != got[0].ID {
		t.Fatalf("second overwrite = %+v, %v; want approve with the same id", again, err)
	}
	if _, err := dg.ApplicationCommandCreate(s.AppID(), gld, &discordgo.ApplicationCommand{Name: "deny", Description: "Deny"}); err != nil {
		t.Fatal(err)
	}
	list, err := dg.ApplicationCommands(s.AppID(), gld)
	if err != nil || len(list) != 1 || list[0].GuildID != gld || len(s.Commands("")) != 1 {
		t.Fatalf("guild commands %+v, %v", list, err)
	}
	_, err = dg.ApplicationCommandBulkOverwrite(s.AppID(), "", []*discordgo.ApplicationCommand{{Name: "Approve", Description: "x"}})
	restError(t, err, http.StatusBadRequest, 50035)
	_, err = dg.ApplicationCommandBulkOverwrite("42", "", cmds)
	restError(t, err, http.StatusForbidden, 50001)
}

func TestUnknownRoute(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	_, err := client(t, s, s.Token()).Guild(gld)
	restError(t, err, http.StatusNotFound, 0)
}

func TestRateLimitBucketsPaceDiscordgo(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{RateLimit: RateLimit{Limit: 3, Window: 50 * time.Millisecond}})
	dg := client(t, s, s.Token())
	for i := range 7 {
		if _, err := dg.ChannelMessageSend(dmCh, strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.Messages(dmCh)); n != 7 {
		t.Fatalf("%d messages landed; want 7", n)
	}
	if n := s.OverLimit(); n != 0 {
		t.Fatalf("%d requests over the limit: discordgo did not follow the X-RateLimit headers", n)
	}
}

func TestRateLimitBucketsRefuseAClientIgnoringThem(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{RateLimit: RateLimit{Limit: 2, Window: time.Hour, Global: 3, GlobalWindow: time.Hour}})
	post := func(channel string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/api/v9/channels/"+channel+"/typing", nil)
		req.Header.Set("Authorization", "Bot "+s.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp
	}
	if r := post(dmCh); r.StatusCode != http.StatusNoContent || r.Header.Get("X-RateLimit-Remaining") != "1" || r.Header.Get("X-RateLimit-Limit") != "2" {
		t.Fatalf("first: %d %v", r.StatusCode, r.Header)
	}
	post(dmCh)
	if r := post(dmCh); r.StatusCode != http.StatusTooManyRequests || r.Header.Get("X-RateLimit-Global") != "" {
		t.Fatalf("third in the bucket: %d %v; want a route 429", r.StatusCode, r.Header)
	}
	if r := post(gCh); r.StatusCode != http.StatusTooManyRequests || r.Header.Get("X-RateLimit-Global") != "true" {
		t.Fatalf("another channel past the global limit: %d %v; want a global 429", r.StatusCode, r.Header)
	}
	if n := s.OverLimit(); n != 2 {
		t.Fatalf("OverLimit %d; want 2", n)
	}
}
