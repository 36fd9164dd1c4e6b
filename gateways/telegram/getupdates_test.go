package telegram

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// TestPollReadsTheAnswerInPlace: each poll brings back every update still
// in progress; its answer is read into the poll's buffer, kept from one
// poll to the next, and the updates are not copied out of it. Through the
// library's decoder a poll of a 250 KB batch allocated 1.08 MB (16 KB now).
func TestPollReadsTheAnswerInPlace(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"ok":true,"result":[`)
	for i := range 100 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"update_id":` + strconv.Itoa(1000+i) + `,"message":{"message_id":1,"date":1,"chat":{"id":5,"type":"private"},"text":"` + strings.Repeat("x", 2400) + `"}}`)
	}
	b.WriteString(`]}`)
	body := []byte(b.String())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body) //nolint:errcheck // the test's own client
	}))
	defer srv.Close()
	g := &Gateway{cfg: Config{APIURL: srv.URL, Token: "t", HTTPClient: srv.Client(), StallMargin: 5 * time.Second}}
	g.bot = &tgbotapi.BotAPI{Token: "t", Client: srv.Client()}
	g.bot.SetAPIEndpoint(srv.URL + "/bot%s/%s")
	var buf bytes.Buffer
	poll := func() {
		raws, err := g.fetch(context.Background(), &buf, 1000, 0)
		if err != nil || len(raws) != 100 {
			t.Fatalf("fetch: %d updates, %v", len(raws), err)
		}
	}
	poll()
	// The least of a few polls: the process's other goroutines (the test
	// server's) allocate meanwhile too.
	least := uint64(1 << 62)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		poll()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	if least > uint64(len(body))/4 {
		t.Fatalf("a poll of a %d-byte batch allocated %d bytes; want at most a quarter of the batch", len(body), least)
	}
	t.Logf("a poll of a %d-byte batch allocated %d bytes", len(body), least)
}
