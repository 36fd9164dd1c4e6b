package telegram

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestPrepareAsksGetMeBeforeBuild: Prepare sends getMe at once, in the
// background; the prepared section's Build waits for its answer and does
// not ask again, and the gateway is the bot getMe named. A token Telegram
// refuses still fails Build, without the token in the error.
func TestPrepareAsksGetMeBeforeBuild(t *testing.T) {
	tg := faketg.New(faketg.Options{Token: testToken, BotID: 424242, BotUsername: "prepared_bot"})
	t.Cleanup(tg.Close)
	on := true
	s := &Section{Enable: &on, Token: confkit.Secret(testToken), APIURL: tg.URL(), Mode: ModePolling, Group: GroupMention}
	ctx := context.Background()
	p := s.Prepare(ctx, gateways.Deps{})
	testutil.WaitFor(t, "getMe, before Build", func() bool { return tg.Calls("getMe") == 1 })
	gw, err := p.Build(ctx, gateways.Deps{})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if self := gw.(*Gateway).Self(); self.ID != 424242 || self.UserName != "prepared_bot" {
		t.Errorf("Self = %+v; want getMe's bot", self)
	}
	if n := tg.Calls("getMe"); n != 1 {
		t.Errorf("getMe asked %d times; want 1", n)
	}

	bad := &Section{Enable: &on, Token: confkit.Secret("111:TEST-a-token-telegram-refuses-000"), APIURL: tg.URL(), Mode: ModePolling, Group: GroupMention}
	_, err = bad.Prepare(ctx, gateways.Deps{}).Build(ctx, gateways.Deps{})
	if err == nil || !strings.Contains(err.Error(), "getMe") || strings.Contains(err.Error(), "refuses") {
		t.Fatalf("Build with a refused token: %v; want a getMe error without the token", err)
	}
}
