package slack

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func eventsMode(c *Config) { c.Mode = ModeEvents }

// serve sends r to the gateway's handler and returns the response.
func serve(h *harness, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.gw.EventsHandler().ServeHTTP(w, r)
	return w
}

func TestEventsAPISignedEventsDeduplicated(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}, eventsMode).start()
	signer := h.fake.Signer(testSecret)
	const target = "http://bot.example" + EventsPath

	if w := serve(h, signer.URLVerification(target, "chal-123")); w.Code != 200 || w.Body.String() != "chal-123" {
		t.Fatalf("url_verification: %d %q", w.Code, w.Body.String())
	}
	req, id, ts := signer.EventCallback(target, fakeslack.Event{Channel: "D1", ChannelType: "im", User: "U1", Text: "hi over http"})
	if w := serve(h, req); w.Code != 200 {
		t.Fatalf("event: %d", w.Code)
	}
	s := h.inbox.Next(t)
	if s.Conv != (core.Conversation{Gateway: Name, Chat: "D1"}) || s.Text != "hi over http" || s.MessageID != ts {
		t.Fatalf("signal %+v", s)
	}
	// Slack's retry of the same event: answered, not handled again.
	again, _, _ := signer.Retry(1).EventCallback(target, fakeslack.Event{Channel: "D1", ChannelType: "im", User: "U1", Text: "hi over http", EventID: id, TS: ts})
	if w := serve(h, again); w.Code != 200 {
		t.Fatalf("retry: %d", w.Code)
	}
	mention, _, mts := signer.EventCallback(target, fakeslack.Event{Type: "app_mention", Channel: "C1", User: "U1", Text: "<@U0BOT> in a channel"})
	serve(h, mention)
	if s := h.inbox.Next(t); s.Text != "in a channel" || s.Conv.Thread != mts {
		t.Fatalf("the retry was handled again, or the mention is wrong: %+v", s)
	}
	h.inbox.Empty(t)
}

func TestEventsAPIRefusesForgedAndStaleRequests(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}, eventsMode).start()
	const target = "http://bot.example" + EventsPath
	ev := fakeslack.Event{Channel: "D1", ChannelType: "im", User: "U1", Text: "let me in"}
	cases := map[string]fakeslack.Signer{
		"forged":       h.fake.Signer(testSecret).Forge(),
		"stale":        h.fake.Signer(testSecret).Stale(6 * time.Minute),
		"future":       h.fake.Signer(testSecret).Stale(-6 * time.Minute),
		"wrong key":    h.fake.Signer("another-secret"),
		"no timestamp": h.fake.Signer(testSecret),
	}
	for name, signer := range cases {
		req, _, _ := signer.EventCallback(target, ev)
		if name == "no timestamp" {
			req.Header.Del("X-Slack-Request-Timestamp")
		}
		if w := serve(h, req); w.Code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, w.Code)
		}
	}
	// Just inside the skew limit is accepted.
	req, _, _ := h.fake.Signer(testSecret).Stale(4*time.Minute).EventCallback(target, ev)
	if w := serve(h, req); w.Code != 200 {
		t.Fatalf("a 4-minute-old request: %d", w.Code)
	}
	if s := h.inbox.Next(t); s.Text != "let me in" {
		t.Fatalf("signal %+v", s)
	}
	h.inbox.Empty(t)
	if !strings.Contains(h.logs.String(), "not signed right") {
		t.Error("refusals not logged")
	}
}

func TestEventsAPIInteractivityAndSlashCommands(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}, eventsMode).start()
	signer := h.fake.Signer(testSecret)
	const target = "http://bot.example" + EventsPath
	conv := core.Conversation{Gateway: Name, Chat: "C1", Thread: "1700000000.000100"}
	if err := h.gw.PromptApproval(t.Context(), conv, requestText, core.ApprovalPrompt{Token: "K7Q2MX9P", Tool: "shell"}); err != nil {
		t.Fatal(err)
	}
	req := h.fake.Posts("C1")[0]
	w := serve(h, signer.BlockAction(target, fakeslack.BlockAction{User: "U1", Channel: "C1", MessageTS: req.TS, ThreadTS: conv.Thread, ActionID: actionDeny, Value: "K7Q2MX9P"}))
	if w.Code != 200 {
		t.Fatalf("interactivity: %d", w.Code)
	}
	testutil.WaitFor(t, "the press", func() bool { return len(h.appr.Calls()) == 1 })
	if c := h.appr.Calls()[0]; c.From != "slack:U1" || c.Decision != core.DecisionDeny || c.Conv != conv {
		t.Fatalf("press %+v", c)
	}
	w = serve(h, signer.SlashCommand(target, fakeslack.SlashCommand{Command: "/pending", User: "U1", Channel: "C1"}))
	if w.Code != 200 || w.Body.Len() != 0 {
		t.Fatalf("slash command: %d %q", w.Code, w.Body.String())
	}
	s := h.inbox.Next(t)
	if s.Text != "/pending" || s.From != "slack:U1" {
		t.Fatalf("signal %+v", s)
	}
	h.act(core.Action{Kind: core.ActionReply, Conv: s.Conv, Text: "No pending requests.", ReplyTo: s.MessageID})
	if rp := h.fake.ResponseURLPosts(); len(rp) != 1 || rp[0].Text != "No pending requests." {
		t.Fatalf("response_url posts %+v", rp)
	}
	// A signed body that is not JSON is answered and skipped.
	bad := signer.URLVerification(target, "x")
	body := []byte("{not json")
	bad.Body = io.NopCloser(bytes.NewReader(body))
	bad.Header.Set("X-Slack-Signature", fakeslack.Sign(testSecret, bad.Header.Get("X-Slack-Request-Timestamp"), body))
	if w := serve(h, bad); w.Code != 200 {
		t.Fatalf("malformed: %d", w.Code)
	}
	h.inbox.Empty(t)
}

func TestEventsAPIOwnListener(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}, eventsMode, func(c *Config) { c.Listen = "127.0.0.1:0" }).start()
	addr := h.gw.EventsAddr()
	if addr == "" {
		t.Fatal("no listener")
	}
	req, _, _ := h.fake.Signer(testSecret).EventCallback("http://"+addr+EventsPath, fakeslack.Event{Channel: "D1", ChannelType: "im", User: "U1", Text: "over the wire"})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if s := h.inbox.Next(t); s.Text != "over the wire" {
		t.Fatalf("signal %+v", s)
	}
}
