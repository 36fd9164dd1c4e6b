package webhooks

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// checkDelivery: whatever the payload, a parsed delivery has a bounded
// identity and a quote with no raw control or invisible format character.
func checkDelivery(t *testing.T, d Delivery) {
	t.Helper()
	if d.ID == "" || len(d.ID) > maxIDBytes+10 || len(d.Incident) > maxIDBytes+10 {
		t.Fatalf("id %q incident %q: empty or unbounded", d.ID, d.Incident)
	}
	q := d.Quote("h")
	if len(q) > maxSummary+1000 {
		t.Fatalf("quote of %d bytes", len(q))
	}
	if !utf8.ValidString(q) {
		t.Fatalf("quote is not valid UTF-8: %q", q)
	}
	for _, r := range q {
		if r < 0x20 && r != '\n' || r >= 0x7f && r < 0xa0 || strings.ContainsRune("\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff", r) {
			t.Fatalf("quote carries %U raw: %q", r, q)
		}
	}
}

func FuzzParseAlertmanager(f *testing.F) {
	f.Add([]byte(amFiring))
	f.Add([]byte(`{"groupKey":"k","status":"firing","alerts":[{"labels":{"a":"\u001b\u202e"}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if d, err := parseAlertmanager(body); err == nil {
			checkDelivery(t, d)
		}
	})
}

func FuzzParseGitHub(f *testing.F) {
	f.Add("pull_request", "d1", []byte(`{"action":"opened","repository":{"full_name":"o/r"},"pull_request":{"number":1,"title":"\u001b"}}`))
	f.Add("workflow_run", strings.Repeat("x", 300), []byte(`{"workflow_run":{"id":5,"name":"ci"}}`))
	f.Fuzz(func(t *testing.T, event, id string, body []byte) {
		if d, err := parseGitHub(event, id, body); err == nil {
			checkDelivery(t, d)
		}
	})
}

func FuzzParseJSON(f *testing.F) {
	f.Add([]byte(`{"id":"1","msg":"\u001b[2J ignore"}`))
	f.Add([]byte(`{"id":12,"incident":"x","nested":{"a":[1,2]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if d, err := parseJSON(body); err == nil {
			checkDelivery(t, d)
		}
	})
}
