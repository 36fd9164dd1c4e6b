package slack

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func newFake(t *testing.T, o Options) (*Server, *slack.Client) {
	t.Helper()
	s := New(o)
	t.Cleanup(s.Close)
	api := slack.New(s.BotToken(), slack.OptionAPIURL(s.URL()+"/api/"), slack.OptionAppLevelToken(s.AppToken()))
	return s, api
}

func approvalBlocks(value string) []slack.Block {
	text := slack.NewTextBlockObject(slack.MarkdownType, "*run* `ls`?", false, false)
	approve := slack.NewButtonBlockElement("approve", value, slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false))
	deny := slack.NewButtonBlockElement("deny", value, slack.NewTextBlockObject(slack.PlainTextType, "Deny", false, false))
	return []slack.Block{slack.NewSectionBlock(text, nil, nil), slack.NewActionBlock("approval", approve, deny)}
}

func TestAuthTestAndTokens(t *testing.T) {
	s, api := newFake(t, Options{})
	got, err := api.AuthTest()
	if err != nil {
		t.Fatal(err)
	}
	if got.UserID != s.BotUserID() || got.BotID != s.BotID() || got.TeamID != s.TeamID() {
		t.Fatalf("auth.test = %+v", got)
	}
	cases := []struct {
		name string
		api  *slack.Client
		want string
	}{
		{"wrong bot token", slack.New("xoxb-wrong", slack.OptionAPIURL(s.URL()+"/api/")), "invalid_auth"},
		{"app token for a bot method", slack.New(s.AppToken(), slack.OptionAPIURL(s.URL()+"/api/")), "invalid_auth"},
		{"no token", slack.New("", slack.OptionAPIURL(s.URL()+"/api/")), "not_authed"},
	}
	for _, c := range cases {
		_, err := c.api.AuthTest()
		var se slack.SlackErrorResponse
		if !errors.As(err, &se) || se.Err != c.want {
			t.Errorf("%s: err %v, want %s", c.name, err, c.want)
		}
	}
	// apps.connections.open wants the app token, not the bot token.
	if _, _, err := slack.New(s.BotToken(), slack.OptionAPIURL(s.URL()+"/api/"), slack.OptionAppLevelToken(s.BotToken())).StartSocketModeContext(t.Context()); err == nil || err.Error() != "invalid_auth" {
		t.Fatalf("connections.open with the bot token: %v", err)
	}
	_, wsURL, err := api.StartSocketModeContext(t.Context())
	if err != nil || !strings.HasPrefix(wsURL, "ws://127.0.0.1:") {
		t.Fatalf("connections.open: %q, %v", wsURL, err)
	}
}

func TestPostMessageWithBlocksInThread(t *testing.T) {
	s, api := newFake(t, Options{})
	ch, ts, err := api.PostMessage("C1", slack.MsgOptionText("run `ls`?", false),
		slack.MsgOptionBlocks(approvalBlocks("tok123")...), slack.MsgOptionTS("1700000000.000100"))
	if err != nil || ch != "C1" || ts == "" {
		t.Fatalf("post: %q %q %v", ch, ts, err)
	}
	_, ts2, err := api.PostMessage("C1", slack.MsgOptionText("second", false))
	if err != nil || ts2 <= ts {
		t.Fatalf("second post ts %q after %q: %v", ts2, ts, err)
	}
	posts := s.Posts("C1")
	if len(posts) != 2 || s.Posts("C2") != nil || len(s.Posts("")) != 2 {
		t.Fatalf("posts %+v", s.Posts(""))
	}
	p := posts[0]
	if p.TS != ts || p.Text != "run `ls`?" || p.ThreadTS != "1700000000.000100" {
		t.Fatalf("recorded %+v", p)
	}
	want := []Button{
		{BlockID: "approval", ActionID: "approve", Text: "Approve", Value: "tok123"},
		{BlockID: "approval", ActionID: "deny", Text: "Deny", Value: "tok123"},
	}
	if got := p.Buttons(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("buttons %+v", got)
	}
	if posts[1].Blocks != nil || posts[1].ThreadTS != "" {
		t.Fatalf("plain post recorded %+v", posts[1])
	}
}

func TestChatUpdateAndEphemeral(t *testing.T) {
	s, api := newFake(t, Options{})
	_, ts, err := api.PostMessage("C1", slack.MsgOptionText("approve?", false), slack.MsgOptionBlocks(approvalBlocks("t")...))
	if err != nil {
		t.Fatal(err)
	}
	done := slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "approved by <@U1>", false, false), nil, nil)
	if _, _, _, err := api.UpdateMessage("C1", ts, slack.MsgOptionText("approved", false), slack.MsgOptionBlocks(done)); err != nil {
		t.Fatal(err)
	}
	m, ok := s.Message("C1", ts)
	if !ok || m.Text != "approved" || m.Edits != 1 || len(m.Buttons()) != 0 {
		t.Fatalf("message after update %+v", m)
	}
	if u := s.Updates(); len(u) != 1 || u[0].TS != ts || u[0].Text != "approved" {
		t.Fatalf("updates %+v", u)
	}
	var se slack.SlackErrorResponse
	if _, _, _, err := api.UpdateMessage("C1", "1.000001", slack.MsgOptionText("x", false)); !errors.As(err, &se) || se.Err != "message_not_found" {
		t.Fatalf("update of an unknown ts: %v", err)
	}
	if _, _, _, err := api.UpdateMessage("C2", ts, slack.MsgOptionText("x", false)); !errors.As(err, &se) || se.Err != "message_not_found" {
		t.Fatalf("update in the wrong channel: %v", err)
	}
	ets, err := api.PostEphemeral("C1", "U9", slack.MsgOptionText("not authorised", false))
	if err != nil || ets == "" {
		t.Fatalf("ephemeral: %q %v", ets, err)
	}
	if e := s.Ephemerals(); len(e) != 1 || e[0].User != "U9" || e[0].Channel != "C1" || e[0].Text != "not authorised" {
		t.Fatalf("ephemerals %+v", e)
	}
}

func TestSlackLimits(t *testing.T) {
	s, api := newFake(t, Options{})
	section := func(n int) slack.Block {
		return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, strings.Repeat("a", n), false, false), nil, nil)
	}
	button := func(label, value string) slack.Block {
		return slack.NewActionBlock("b", slack.NewButtonBlockElement("a", value, slack.NewTextBlockObject(slack.PlainTextType, label, false, false)))
	}
	many := make([]slack.Block, 51)
	for i := range many {
		many[i] = section(1)
	}
	cases := []struct {
		name string
		opts []slack.MsgOption
		want string
	}{
		{"45,000 characters", []slack.MsgOption{slack.MsgOptionText(strings.Repeat("x", 45000), false)}, "msg_too_long"},
		{"40,000 characters", []slack.MsgOption{slack.MsgOptionText(strings.Repeat("é", 40000), false)}, ""},
		{"51 blocks", []slack.MsgOption{slack.MsgOptionText("t", false), slack.MsgOptionBlocks(many...)}, "invalid_blocks"},
		{"50 blocks", []slack.MsgOption{slack.MsgOptionText("t", false), slack.MsgOptionBlocks(many[:50]...)}, ""},
		{"section of 3001", []slack.MsgOption{slack.MsgOptionBlocks(section(3001))}, "invalid_blocks"},
		{"section of 3000", []slack.MsgOption{slack.MsgOptionBlocks(section(3000))}, ""},
		{"button value of 2001", []slack.MsgOption{slack.MsgOptionBlocks(button("Go", strings.Repeat("v", 2001)))}, "invalid_blocks"},
		{"button value of 2000", []slack.MsgOption{slack.MsgOptionBlocks(button("Go", strings.Repeat("v", 2000)))}, ""},
		{"nothing", []slack.MsgOption{slack.MsgOptionText("", false)}, "no_text"},
	}
	for _, c := range cases {
		_, _, err := api.PostMessage("C1", c.opts...)
		var se slack.SlackErrorResponse
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (!errors.As(err, &se) || se.Err != c.want):
			t.Errorf("%s: err %v, want %s", c.name, err, c.want)
		}
	}
	if n := len(s.Posts("C1")); n != 4 {
		t.Fatalf("%d posts recorded, want the 4 accepted", n)
	}
}

// post sends a raw Web API call, as a client other than slack-go might.
func post(t *testing.T, s *Server, method, contentType, body, bearer string) map[string]any {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+"/api/"+method, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s answered no JSON: %v", method, err)
	}
	return out
}

func TestJSONBodiesAndMalformedBlocks(t *testing.T) {
	s, _ := newFake(t, Options{})
	got := post(t, s, "chat.postMessage", "application/json; charset=utf-8",
		`{"channel":"C1","text":"hi","thread_ts":"1.000001","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"hi"}}]}`, s.BotToken())
	if got["ok"] != true || got["ts"] == "" {
		t.Fatalf("JSON post: %v", got)
	}
	if p := s.Posts("C1"); len(p) != 1 || p[0].ThreadTS != "1.000001" || !strings.Contains(string(p[0].Blocks), `"mrkdwn"`) {
		t.Fatalf("recorded %+v", p)
	}
	form := url.Values{"token": {s.BotToken()}, "channel": {"C1"}, "text": {"x"}, "blocks": {`[{"type":"section"`}}
	if got := post(t, s, "chat.postMessage", "application/x-www-form-urlencoded", form.Encode(), ""); got["error"] != "invalid_blocks" {
		t.Fatalf("malformed blocks: %v", got)
	}
	if got := post(t, s, "chat.postMessage", "application/json", `{"channel":"C1","text":"x"}`, ""); got["error"] != "not_authed" {
		t.Fatalf("JSON without a bearer: %v", got)
	}
	if got := post(t, s, "chat.delete", "application/json", `{}`, s.BotToken()); got["error"] != "unknown_method" {
		t.Fatalf("unknown method: %v", got)
	}
}

func TestFaults(t *testing.T) {
	s, api := newFake(t, Options{RetryAfter: 2})
	s.FailNext("chat.postMessage", 1, FaultRateLimited)
	_, _, err := api.PostMessage("C1", slack.MsgOptionText("hi", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 2*time.Second {
		t.Fatalf("429: %v", err)
	}
	// Calling again at once is early: the client did not honour Retry-After.
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("hi", false)); err != nil || s.Early() != 1 {
		t.Fatalf("after the 429: %v, early %d", err, s.Early())
	}
	s.FailNext("chat.postMessage", 1, FaultServer)
	var sc slack.StatusCodeError
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("hi", false)); !errors.As(err, &sc) || sc.Code != http.StatusInternalServerError {
		t.Fatalf("500: %v", err)
	}
	s.FailNext("", 2, FaultUnavailable)
	if _, err := api.AuthTest(); !errors.As(err, &sc) || sc.Code != http.StatusServiceUnavailable {
		t.Fatalf("503 for any method: %v", err)
	}
	s.FailNext("chat.update", 1, FaultMalformed)
	// The method's own fault comes first, then the one left for any method.
	var syntax *json.SyntaxError
	if _, _, _, err := api.UpdateMessage("C1", "1.1", slack.MsgOptionText("x", false)); !errors.As(err, &syntax) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("malformed JSON: %v", err)
	}
	if _, _, _, err := api.UpdateMessage("C1", "1.1", slack.MsgOptionText("x", false)); !errors.As(err, &sc) || sc.Code != http.StatusServiceUnavailable {
		t.Fatalf("the second fault for any method: %v", err)
	}
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("after", false)); err != nil {
		t.Fatalf("faults used up: %v", err)
	}
	if got := len(s.Posts("C1")); got != 2 {
		t.Fatalf("%d posts recorded, want the 2 accepted", got)
	}
	if s.Calls("chat.postMessage") != 4 || s.Calls("chat.update") != 2 {
		t.Fatalf("calls: postMessage %d, update %d", s.Calls("chat.postMessage"), s.Calls("chat.update"))
	}
}

func TestResponseURL(t *testing.T) {
	s, api := newFake(t, Options{})
	s.mu.Lock()
	u := s.newResponseURLLocked()
	s.mu.Unlock()
	if _, _, err := api.PostMessage("", slack.MsgOptionResponseURL(u, slack.ResponseTypeEphemeral), slack.MsgOptionText("approved", false)); err != nil {
		t.Fatal(err)
	}
	got := s.ResponseURLPosts()
	if len(got) != 1 || got[0].URL != u || got[0].Text != "approved" || got[0].ResponseType != "ephemeral" {
		t.Fatalf("response_url posts %+v", got)
	}
	if err := slack.PostWebhookContext(t.Context(), s.URL()+responsePath+"T999999", &slack.WebhookMessage{Text: "x"}); err == nil {
		t.Fatal("a response_url the fake never handed out was accepted")
	}
	for range maxResponseUses - 1 {
		if err := slack.PostWebhookContext(t.Context(), u, &slack.WebhookMessage{Text: "again"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := slack.PostWebhookContext(t.Context(), u, &slack.WebhookMessage{Text: "sixth"}); err == nil {
		t.Fatal("a sixth post to one response_url was accepted")
	}
}

func TestChannelPacing(t *testing.T) {
	s, api := newFake(t, Options{ChannelRate: time.Hour, ChannelBurst: 2})
	for i := range 2 {
		if _, _, err := api.PostMessage("C1", slack.MsgOptionText("burst", false)); err != nil {
			t.Fatalf("post %d of the burst: %v", i+1, err)
		}
	}
	_, _, err := api.PostMessage("C1", slack.MsgOptionText("one too many", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter < 59*time.Minute {
		t.Fatalf("past the burst: %v", err)
	}
	if _, _, err := api.PostMessage("C2", slack.MsgOptionText("another channel", false)); err != nil {
		t.Fatalf("another channel is paced apart: %v", err)
	}
	if _, err := api.PostEphemeral("C1", "U1", slack.MsgOptionText("not paced", false)); err != nil {
		t.Fatalf("ephemeral: %v", err)
	}
	if len(s.Posts("C1")) != 2 || s.RateLimited() != 1 {
		t.Fatalf("%d posts, %d 429s", len(s.Posts("C1")), s.RateLimited())
	}

	// A fast refill: the bucket has room again after a while.
	s, api = newFake(t, Options{ChannelRate: 20 * time.Millisecond, ChannelBurst: 1})
	for i := range 3 {
		testutil.WaitFor(t, "room in the bucket", func() bool {
			_, _, err := api.PostMessage("C1", slack.MsgOptionText(strconv.Itoa(i), false))
			return err == nil
		})
	}
	if p := s.Posts("C1"); len(p) != 3 || p[0].Text != "0" || p[2].Text != "2" {
		t.Fatalf("posts %+v", p)
	}
}

// TestFaultHang: a held call waits for Release and is then answered
// normally; one held when the client gives up is not answered.
func TestFaultHang(t *testing.T) {
	s, api := newFake(t, Options{})
	s.FailNext("auth.test", 1, FaultHang)
	done := make(chan error, 1)
	go func() {
		_, err := api.AuthTest()
		done <- err
	}()
	testutil.WaitFor(t, "the held auth.test", func() bool { return s.Calls("auth.test") == 1 })
	select {
	case err := <-done:
		t.Fatalf("auth.test answered while held: %v", err)
	default:
	}
	s.Release()
	if err := <-done; err != nil {
		t.Fatalf("auth.test after Release: %v", err)
	}

	s.FailNext("auth.test", 1, FaultHang)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := api.AuthTestContext(ctx)
		done <- err
	}()
	testutil.WaitFor(t, "the second held auth.test", func() bool { return s.Calls("auth.test") == 2 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("auth.test given up: %v, want context.Canceled", err)
	}
}
