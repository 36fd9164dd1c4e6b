package slack

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

const secret = "8f742231b10e8888abcd99yyyzzz85a5"

// verify checks r's signature with slack-go's own verifier, as an adapter
// would, and returns the body.
func verify(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	sv, err := slack.NewSecretsVerifier(r.Header, secret)
	if err != nil {
		return body, err
	}
	if _, err := sv.Write(body); err != nil {
		return body, err
	}
	return body, sv.Ensure()
}

func TestSignerSignsAsSlack(t *testing.T) {
	// The example from Slack's "Verifying requests from Slack" page.
	body := []byte("token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c")
	want := "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
	if got := Sign(secret, "1531420618", body); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

func TestSignerEventCallback(t *testing.T) {
	s := New(Options{})
	t.Cleanup(s.Close)
	g := s.Signer(secret)
	r, id, ts := g.EventCallback("http://bot.test/slack/events", Event{Channel: "D1", User: "U1", Text: "hi"})
	body, err := verify(r)
	if err != nil {
		t.Fatalf("a genuine request failed verification: %v", err)
	}
	ev, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
	if err != nil {
		t.Fatal(err)
	}
	cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent)
	m, isMsg := ev.InnerEvent.Data.(*slackevents.MessageEvent)
	if !ok || cb.EventID != id || !isMsg || m.TimeStamp != ts || m.ChannelType != "im" || m.Text != "hi" {
		t.Fatalf("event %+v inner %+v", ev.Data, ev.InnerEvent.Data)
	}
	if r.Header.Get("X-Slack-Retry-Num") != "" {
		t.Fatal("a first delivery carries a retry number")
	}
	// A retry: the same event again, marked as Slack marks redeliveries.
	r, id2, ts2 := g.Retry(1).EventCallback("http://bot.test/slack/events", Event{Channel: "D1", User: "U1", Text: "hi", EventID: id, TS: ts})
	if id2 != id || ts2 != ts || r.Header.Get("X-Slack-Retry-Num") != "1" || r.Header.Get("X-Slack-Retry-Reason") != "http_timeout" {
		t.Fatalf("retry: %s %s %v", id2, ts2, r.Header)
	}
	if _, err := verify(r); err != nil {
		t.Fatalf("retry failed verification: %v", err)
	}
}

func TestSignerForgedAndStale(t *testing.T) {
	s := New(Options{})
	t.Cleanup(s.Close)
	g := s.Signer(secret)
	forged, _, _ := g.Forge().EventCallback("http://bot.test/", Event{Channel: "D1", User: "U1", Text: "hi"})
	if _, err := verify(forged); err == nil {
		t.Fatal("a forged request passed verification")
	}
	stale := g.Stale(10*time.Minute).URLVerification("http://bot.test/", "c")
	if _, err := verify(stale); !errors.Is(err, slack.ErrExpiredTimestamp) {
		t.Fatalf("stale request: %v", err)
	}
	wrong := s.Signer("another secret").URLVerification("http://bot.test/", "c")
	if _, err := verify(wrong); err == nil {
		t.Fatal("a request signed with another secret passed verification")
	}
}

func TestSignerURLVerificationOverHTTP(t *testing.T) {
	s := New(Options{})
	t.Cleanup(s.Close)
	// A minimal Events API endpoint, to show the requests work with a real
	// client and server as well as with ServeHTTP.
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := verify(r)
		if err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		ev, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
		if err != nil || ev.Type != slackevents.URLVerification {
			http.Error(w, "not a url_verification", http.StatusBadRequest)
			return
		}
		var ch slackevents.ChallengeResponse
		_ = json.Unmarshal(body, &ch)
		_, _ = w.Write([]byte(ch.Challenge))
	}))
	t.Cleanup(app.Close)
	resp, err := http.DefaultClient.Do(s.Signer(secret).URLVerification(app.URL, "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(got) != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" {
		t.Fatalf("%d %q", resp.StatusCode, got)
	}
	resp, err = http.DefaultClient.Do(s.Signer(secret).Forge().URLVerification(app.URL, "x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("forged request answered %d", resp.StatusCode)
	}
}

func TestSignerInteractivityAndSlashCommand(t *testing.T) {
	s, api := newFake(t, Options{})
	_, ts, err := api.PostMessage("C1", slack.MsgOptionText("approve?", false), slack.MsgOptionBlocks(approvalBlocks("tok1")...))
	if err != nil {
		t.Fatal(err)
	}
	g := s.Signer(secret)
	r := g.BlockAction("http://bot.test/slack/interactivity", BlockAction{User: "U2", Channel: "C1", MessageTS: ts, ActionID: "deny", Value: "tok1"})
	if _, err := verify(r); err != nil {
		t.Fatal(err)
	}
	cb, err := slack.InteractionCallbackParse(r)
	if err != nil {
		t.Fatal(err)
	}
	if acts := cb.ActionCallback.BlockActions; cb.Type != slack.InteractionTypeBlockActions || cb.User.ID != "U2" ||
		cb.Container.MessageTs != ts || len(acts) != 1 || acts[0].ActionID != "deny" || acts[0].BlockID != "approval" {
		t.Fatalf("interaction %+v", cb)
	}
	r = g.SlashCommand("http://bot.test/slack/commands", SlashCommand{Command: "/deny", Text: "tok1 too risky", User: "U2", Channel: "C1"})
	if _, err := verify(r); err != nil {
		t.Fatal(err)
	}
	cmd, err := slack.SlashCommandParse(r)
	if err != nil || cmd.Command != "/deny" || cmd.Text != "tok1 too risky" || cmd.UserID != "U2" || cmd.ResponseURL == "" {
		t.Fatalf("slash command %+v, %v", cmd, err)
	}
	if err := slack.PostWebhookContext(t.Context(), cmd.ResponseURL, &slack.WebhookMessage{Text: "denied", ResponseType: "ephemeral"}); err != nil {
		t.Fatal(err)
	}
	if p := s.ResponseURLPosts(); len(p) != 1 || p[0].Text != "denied" || p[0].ResponseType != "ephemeral" {
		t.Fatalf("response_url posts %+v", p)
	}
}
