package telegram

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func TestWebhookChecksTheSecret(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) {
		c.Mode = ModeWebhook
		c.Webhook = Webhook{Listen: "127.0.0.1:0", PublicURL: "https://bot.example.test/tg/hook", SecretToken: "s3cret-hook"}
	})).start()
	testutil.WaitFor(t, "setWebhook", func() bool { u, _ := h.fake.Webhook(); return u != "" })
	if u, secret := h.fake.Webhook(); u != "https://bot.example.test/tg/hook" || secret != "s3cret-hook" {
		t.Fatalf("setWebhook got %q %q", u, secret)
	}
	url := "http://" + h.gw.WebhookAddr() + "/tg/hook"
	update := `{"update_id":501,"message":{"message_id":9,"date":1,"chat":{"id":1001,"type":"private"},"from":{"id":1001,"is_bot":false,"first_name":"Alice"},"text":"via webhook"}}`
	post := func(secret string) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(update))
		req.Header.Set("Content-Type", "application/json")
		if secret != "" {
			req.Header.Set(secretHeader, secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, bad := range []string{"", "wrong", "s3cret-hoo"} {
		if code := post(bad); code != http.StatusUnauthorized {
			t.Fatalf("secret %q: status %d", bad, code)
		}
	}
	h.inbox.Empty(t)
	if code := post("s3cret-hook"); code != http.StatusOK {
		t.Fatalf("right secret: status %d", code)
	}
	if s := h.inbox.Next(t); s.Text != "via webhook" || s.From != "telegram:1001" {
		t.Fatalf("signal %+v", s)
	}
	if code := post("s3cret-hook"); code != http.StatusOK {
		t.Fatalf("redelivery: status %d", code)
	}
	h.inbox.Empty(t)
	if strings.Contains(h.logs.String(), "s3cret-hook") {
		t.Fatal("the webhook secret leaked into the logs")
	}
}

func TestPollingClearsAStaleWebhook(t *testing.T) {
	h := newHarness(t)
	resp, err := http.Post(h.fake.URL()+"/bot"+h.fake.Token()+"/setWebhook?url=https://old.example.test/", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h.start()
	h.fake.InjectMessage(dm(alice, "polling again"))
	if s := h.inbox.Next(t); s.Text != "polling again" {
		t.Fatalf("signal %+v", s)
	}
}
