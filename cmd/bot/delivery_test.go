package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestDeliveryFailureLoggedAndCounted: the binary with Telegram against
// the fake. A reply Telegram refuses (a 4xx, not retried) is logged as an
// error with its conversation and counted on /metrics; the next reply is
// delivered and counted as sent.
func TestDeliveryFailureLoggedAndCounted(t *testing.T) {
	t.Parallel()
	tg := faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	t.Cleanup(tg.Close)
	addr := freeAddr(t)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fmt.Sprintf(`gateways:
  console: {enabled: false}
  telegram: {token: %q, api_url: %q}
hitl: {approvers: ["telegram:42"]}
tools: {workspace: ./workspace}
store: {dsn: gatehouse.db}
http: {listen: %q}
log: {level: info, format: json}
`, tg.Token(), tg.URL(), addr))
	p := startBot(t, dir, baseEnv(dir))

	tg.FailNext("sendMessage", 1, faketg.FaultConflict)
	first := faketg.User{ID: 501, FirstName: "Stranger"}
	tg.InjectMessage(faketg.Message{From: &first, Chat: faketg.Chat{ID: first.ID, Type: "private"}, Text: "hello"})
	testutil.WaitFor(t, "the refused reply counted", func() bool {
		return strings.Contains(metrics(t, addr), `gatehouse_delivery_failed_total{gateway="telegram"} 1`)
	})
	testutil.WaitFor(t, "the failure logged", func() bool {
		for line := range strings.SplitSeq(p.stderr.String(), "\n") {
			if strings.Contains(line, `"level":"error"`) && strings.Contains(line, `"conv":"telegram:501"`) &&
				strings.Contains(line, "reply not delivered") && strings.Contains(line, `"gateway":"telegram"`) {
				return true
			}
		}
		return false
	})

	second := faketg.User{ID: 502, FirstName: "Other"}
	tg.InjectMessage(faketg.Message{From: &second, Chat: faketg.Chat{ID: second.ID, Type: "private"}, Text: "hello"})
	testutil.WaitFor(t, "the next reply counted as sent", func() bool {
		m := metrics(t, addr)
		return strings.Contains(m, `gatehouse_delivery_sent_total{gateway="telegram"} 1`) &&
			strings.Contains(m, `gatehouse_delivery_failed_total{gateway="telegram"} 1`)
	})
	if sent := tg.Sent(); len(sent) != 1 || sent[0].ChatID != second.ID {
		t.Fatalf("sent %+v, want only the second stranger's reply", sent)
	}
}

// metrics returns the bot's /metrics page, "" while it does not answer.
func metrics(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return ""
	}
	return string(body)
}
