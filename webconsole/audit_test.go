package webconsole

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store/record"
)

// TestAuditSearch: the audit page searches by time, conversation,
// person, tool, outcome, instance and request, newest first, a page at a
// time; a profile's approver sees only their conversations' entries; the
// JSON download is the same search; a bad field is a plain 400.
func TestAuditSearch(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for i := range 120 {
		e := record.AuditEntry{At: base.Add(time.Duration(i) * time.Minute), Conv: "slack:CDEV", Tool: "shell", Args: "{}",
			RequestedBy: member, Outcome: "executed", Detail: fmt.Sprintf("n%03d", i), Token: "TOKDEV01"}
		if i%3 == 0 {
			e.Conv, e.Tool, e.Instance, e.Token = "slack:COPS", "write_file", "b", "TOKOPS01"
		}
		if err := h.store.AppendAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	ck := h.signIn(ann)
	res, body := h.do(get("/web/audit", ck))
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "n119") || strings.Contains(body, "n069") || !strings.Contains(body, "page=1") {
		t.Fatalf("first page = %d; want n119 down to n070 and a link to the next:\n%s", res.StatusCode, body)
	}
	if strings.Index(body, "n119") > strings.Index(body, "n118") {
		t.Error("the audit page is not newest first")
	}
	_, body = h.do(get("/web/audit?outcome=executed&page=2", ck))
	if !strings.Contains(body, "n019") || strings.Contains(body, "n020") || strings.Contains(body, "page=3") {
		t.Errorf("the last page = %s; want n019 down to n000", body)
	}
	_, body = h.do(get("/web/audit?tool=write_file&instance=b&since=2026-11-01T12:30&until=2026-11-01T12:40", ck))
	if n := strings.Count(body, "<tr>") - 1; n != 4 || !strings.Contains(body, "n039") || !strings.Contains(body, "n030") {
		t.Errorf("search = %d rows; want n030, n033, n036 and n039:\n%s", n, body)
	}
	_, body = h.do(get("/web/audit?person=slack:UNONE", ck))
	if strings.Contains(body, "n0") {
		t.Error("a search by a person who did nothing found entries")
	}
	bobs := h.signIn(bob)
	_, body = h.do(get("/web/audit?outcome=executed", bobs))
	if strings.Contains(body, "slack:CDEV") || !strings.Contains(body, "slack:COPS") {
		t.Errorf("bob, an approver of ops only, sees other conversations' audit:\n%s", body)
	}
	res, body = h.do(get("/web/audit.json?token=TOKOPS01&since=2026-11-01", ck))
	var entries []record.AuditEntry
	if err := json.Unmarshal([]byte(body), &entries); err != nil || len(entries) != 40 || entries[0].Detail != "n117" ||
		!strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("JSON download = %d entries, %v, %q; want the 40 of TOKOPS01, newest first, as an attachment", len(entries), err, res.Header.Get("Content-Disposition"))
	}
	for _, bad := range []string{"since=yesterday", "page=-1", "page=9999", "conv=" + strings.Repeat("x", 300)} {
		if res, _ := h.do(get("/web/audit?"+bad, ck)); res.StatusCode != http.StatusBadRequest {
			t.Errorf("audit?%s = %d; want 400", bad, res.StatusCode)
		}
	}
}
