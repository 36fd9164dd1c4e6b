package telegram

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

func TestNewAgainstDeadServerHidesToken(t *testing.T) {
	_, err := New(context.Background(), Config{Token: testToken, APIURL: "http://127.0.0.1:1"}, Deps{})
	if err == nil {
		t.Fatal("New against nothing succeeded")
	}
	assertNoToken(t, err.Error())
}

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"no token", Config{}},
		{"bad mode", Config{Token: "t", Mode: "push"}},
		{"bad group", Config{Token: "t", Group: "some"}},
		{"webhook without secret", Config{Token: "t", Mode: ModeWebhook, Webhook: Webhook{PublicURL: "https://x"}}},
	} {
		if _, err := tc.cfg.withDefaults(); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	c, err := Config{Token: "t"}.withDefaults()
	if err != nil || c.APIURL != DefaultAPIURL || c.Mode != ModePolling || c.Group != GroupMention || c.Pace.PerChat.N == 0 {
		t.Fatalf("defaults %+v, %v", c, err)
	}
}

func TestCallbackDataRoundTrip(t *testing.T) {
	for _, d := range []core.ApprovalDecision{core.DecisionApprove, core.DecisionDeny, core.DecisionApproveAlways} {
		data := callbackData(d, "K7Q2")
		got, token, ok := parseCallbackData(data)
		if !ok || got != d || token != "K7Q2" || len(data) > maxCallbackData {
			t.Fatalf("%q: %v %q %v", data, got, token, ok)
		}
	}
	for _, bad := range []string{"", "a:", "x:K7", "K7"} {
		if _, _, ok := parseCallbackData(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestTruncateUTF16(t *testing.T) {
	s := strings.Repeat("😀", 150) // 300 units
	got := truncateUTF16(s, 200)
	if n := gateways.UTF16Len(got); n > 200 || !strings.HasSuffix(got, "…") {
		t.Fatalf("%d units: %q", n, got)
	}
	if truncateUTF16("short", 200) != "short" {
		t.Fatal("short text changed")
	}
}

func TestUTF16Span(t *testing.T) {
	text := "😀 @bot hi"
	s, ok := utf16Span(text, 3, 4)
	if !ok || text[s.start:s.end] != "@bot" {
		t.Fatalf("%+v %v", s, ok)
	}
	if _, ok := utf16Span(text, 50, 2); ok {
		t.Fatal("out of range span accepted")
	}
}

func TestRecentIDs(t *testing.T) {
	r := newRecentIDs(2)
	if !r.add(1) || r.add(1) || !r.add(2) || !r.add(3) || !r.add(1) {
		t.Fatal("recentIDs keeps the wrong ids")
	}
	r.forget(3)
	if !r.add(3) {
		t.Fatal("forgotten id not accepted again")
	}
}
