package main

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestOneInstanceOnPostgresKeepsTelegramsLimits: one bot alone on its
// token on a PostgreSQL database, its send slots' runs all its own (the
// token's window OwnMargin longer, not SharedMargin), answering 80 chats
// at once: Telegram still sees no more than 30 messages a second from the
// bot, as the fake's receive times show.
func TestOneInstanceOnPostgresKeepsTelegramsLimits(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	tg := faketg.New(faketg.Options{})
	t.Cleanup(tg.Close)
	llm := startFake(t, func(fakeopenai.Request) fakeopenai.Step { return fakeopenai.Text("MODEL: ok.") })
	bot := startPacedBots(t, dsn, tg, llm, "solo")[0]

	const chats = 80
	var wg sync.WaitGroup
	for i := range chats {
		uid, user := 100+i, int64(5000+i)
		wg.Go(func() {
			if code := bot.post(t, uid, user, "hello"); code != http.StatusOK {
				t.Errorf("update %d answered %d", uid, code)
			}
		})
	}
	wg.Wait()
	testutil.WaitFor(t, fmt.Sprintf("%d replies", chats), func() bool { return len(sentMessages(tg)) >= chats })
	var all []time.Time
	for _, s := range sentMessages(tg) {
		all = append(all, s.At)
	}
	if len(all) != chats {
		t.Fatalf("%d replies; want %d", len(all), chats)
	}
	if n := gatewaytest.MostInWindow(all, time.Second); n > 30 {
		t.Errorf("%d messages from the bot in one second; Telegram allows 30", n)
		slices.SortFunc(all, time.Time.Compare)
		for i := range all {
			t.Logf("reply %d received at +%v", i, all[i].Sub(all[0]))
		}
	}
	gatewaytest.NoSecrets(t, bot.proc.stderr.String(), tg.Token())
}
