package webhooks

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// TestReplyChainIncident: where the gateway opens an incident as a reply
// chain (a Telegram chat without topics), every delivery's turn runs in
// the chat replying to the incident's first message, and a resolution
// not in events is said in one line replying to it too.
func TestReplyChainIncident(t *testing.T) {
	rec := &recorder{}
	hook := Hook{Name: "alerts", Format: FormatAlertmanager, Secret: testSecret, Conv: core.Conversation{Gateway: "telegram", Chat: "-100"},
		Prompt: "An alert.", Events: []string{"firing"}, MaxBytes: 4096, Rate: Rate{N: 1000, Per: time.Second}}
	srv := New([]Hook{hook}, Options{Inbox: rec, Store: newMemStore(), Gateways: rec, Instance: "a"})
	mux := http.NewServeMux()
	mux.Handle(Pattern, srv)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	h := &harness{srv: srv, url: ts.URL, rec: rec}
	h.post(t, "alerts", amFiring, bearer())
	h.post(t, "alerts", strings.Replace(amFiring, `"startsAt":"`, `"startsAt":"1`, 1), bearer()) // a later delivery
	h.post(t, "alerts", strings.ReplaceAll(amFiring, `"firing"`, `"resolved"`), bearer())
	sigs := rec.got()
	if len(sigs) != 2 {
		t.Fatalf("signals %d; want 2", len(sigs))
	}
	for _, s := range sigs {
		if s.Conv.Key() != "telegram:-100" || s.MessageID != "1" {
			t.Errorf("signal in %s replying to %q; want telegram:-100 replying to the first message 1", s.Conv.Key(), s.MessageID)
		}
	}
	if len(rec.opened) != 1 || len(rec.notes) != 1 || !strings.HasPrefix(rec.notes[0], "telegram:-100 ↩1 resolved: DiskFull") {
		t.Fatalf("opened %d, notes %q; want one chain and its resolution replying to its first message", len(rec.opened), rec.notes)
	}
}
