package slack

import (
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func TestNewRefusesBadConfigAndWrongTokenWithoutLeaking(t *testing.T) {
	fake := newFake(fakeslack.Options{})
	defer fake.Close()
	for _, cfg := range []Config{
		{},
		{BotToken: "x", Mode: "webhook"},
		{BotToken: "x", Channel: "some"},
		{BotToken: "x"},                   // socket mode without app token
		{BotToken: "x", Mode: ModeEvents}, // events mode without signing secret
	} {
		if _, err := New(context.Background(), cfg, Deps{}); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
	logs := &testutil.SyncBuffer{}
	cfg := FastConfig(fake)
	cfg.BotToken = "xoxb-TEST-bot-token-never-logged-but-wrong"
	_, err := New(context.Background(), cfg, Deps{Log: zerolog.New(logs)})
	if err == nil || !strings.Contains(err.Error(), "invalid_auth") {
		t.Fatalf("New with a wrong token: %v", err)
	}
	AssertNoSecrets(t, err.Error()+logs.String())
}

func TestSocketModeWrongAppTokenEndsRun(t *testing.T) {
	fake := newFake(fakeslack.Options{})
	defer fake.Close()
	cfg := FastConfig(fake)
	cfg.AppToken = "xapp-TEST-app-token-never-logged-but-wrong"
	logs := &testutil.SyncBuffer{}
	gw, err := New(context.Background(), cfg, Deps{Log: zerolog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	err = gw.Run(t.Context(), testutil.NewInbox())
	if err == nil || !strings.Contains(err.Error(), "app_token") {
		t.Fatalf("Run: %v", err)
	}
	AssertNoSecrets(t, err.Error()+logs.String())
}

func TestStripMentionAndTS(t *testing.T) {
	g := &Gateway{botUser: "U0BOT"}
	if got := g.stripMention("<@U0BOT>  hello <@U9> and <@U0BOT|bot>"); got != "hello <@U9> and" {
		t.Errorf("stripMention = %q", got)
	}
	if !g.mentions("hey <@U0BOT|gatehouse>") || g.mentions("hey <@U0BOTX>") {
		t.Error("mentions")
	}
	if got := tsTime("1700000000.000100"); got.Unix() != 1700000000 || got.Nanosecond() != 100000 {
		t.Errorf("tsTime = %v", got)
	}
}
