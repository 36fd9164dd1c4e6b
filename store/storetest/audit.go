package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// AuditContract tests a store.Audit (store.Audit): entries round trip
// (the instance that wrote each included), every filter field
// selects, results come oldest first, and Limit keeps the newest entries.
func AuditContract(t *testing.T, newAudit func(t *testing.T) store.Audit) {
	t.Helper()
	t.Run("Empty", func(t *testing.T) {
		got, err := newAudit(t).QueryAudit(context.Background(), record.AuditFilter{})
		if err != nil || len(got) != 0 {
			t.Fatalf("QueryAudit on an empty log = %v, %v; want nothing", got, err)
		}
	})
	t.Run("RoundTrip", func(t *testing.T) { auditRoundTrip(t, newAudit(t)) })
	t.Run("Filters", func(t *testing.T) { auditFilters(t, newAudit(t)) })
}

// auditBase is the time of the first sample entry.
var auditBase = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

func auditRoundTrip(t *testing.T, a store.Audit) {
	want := record.AuditEntry{
		At: auditBase, Conv: "slack:C1:T1", Tool: "shell", Args: `{"command":"rm -rf ./build"}`,
		RequestedBy: "slack:U1", ApprovedBy: "alpha:42", Outcome: "executed",
		Detail: "exit 0\nüñí", Instance: "host-a",
	}
	if err := a.AppendAudit(context.Background(), want); err != nil {
		t.Fatalf("AppendAudit: %v", err)
	}
	got, err := a.QueryAudit(context.Background(), record.AuditFilter{})
	if err != nil || len(got) != 1 {
		t.Fatalf("QueryAudit = %v, %v; want one entry", got, err)
	}
	if !got[0].At.Equal(want.At) {
		t.Errorf("At = %v; want %v", got[0].At, want.At)
	}
	got[0].At = want.At
	if got[0] != want {
		t.Errorf("entry = %+v; want %+v", got[0], want)
	}
}

// auditSample appends ten entries, one a minute from auditBase, cycling
// through two conversations, three tools and two outcomes.
func auditSample(t *testing.T, a store.Audit) []record.AuditEntry {
	t.Helper()
	var all []record.AuditEntry
	for i := range 10 {
		e := record.AuditEntry{
			At:          auditBase.Add(time.Duration(i) * time.Minute),
			Conv:        []string{"alpha:1", "slack:C1"}[i%2],
			Tool:        []string{"shell", "read_file", "fetch"}[i%3],
			Args:        fmt.Sprintf(`{"n":%d}`, i),
			RequestedBy: "alpha:7",
			Outcome:     []string{"executed", "denied"}[i/5],
			Detail:      fmt.Sprint(i),
		}
		if err := a.AppendAudit(context.Background(), e); err != nil {
			t.Fatalf("AppendAudit: %v", err)
		}
		all = append(all, e)
	}
	return all
}

func auditFilters(t *testing.T, a store.Audit) {
	all := auditSample(t, a)
	pick := func(idx ...int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, all[i].Detail)
		}
		return out
	}
	tests := []struct {
		name string
		f    record.AuditFilter
		want []string // Details, in order
	}{
		{"all oldest first", record.AuditFilter{}, pick(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)},
		{"conv", record.AuditFilter{Conv: "slack:C1"}, pick(1, 3, 5, 7, 9)},
		{"tool", record.AuditFilter{Tool: "shell"}, pick(0, 3, 6, 9)},
		{"outcome", record.AuditFilter{Outcome: "denied"}, pick(5, 6, 7, 8, 9)},
		{"since is inclusive", record.AuditFilter{Since: all[7].At}, pick(7, 8, 9)},
		{"limit keeps newest", record.AuditFilter{Limit: 3}, pick(7, 8, 9)},
		{"limit above count", record.AuditFilter{Limit: 50}, pick(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)},
		{"combined", record.AuditFilter{Conv: "alpha:1", Tool: "shell", Since: all[1].At}, pick(6)},
		{"conv and limit", record.AuditFilter{Conv: "alpha:1", Limit: 2}, pick(6, 8)},
		{"no match", record.AuditFilter{Tool: "nope"}, nil},
		{"since after all", record.AuditFilter{Since: all[9].At.Add(time.Nanosecond)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := a.QueryAudit(context.Background(), tt.f)
			if err != nil {
				t.Fatalf("QueryAudit: %v", err)
			}
			var details []string
			for _, e := range got {
				details = append(details, e.Detail)
			}
			if fmt.Sprint(details) != fmt.Sprint(tt.want) {
				t.Fatalf("QueryAudit(%+v) details = %v; want %v", tt.f, details, tt.want)
			}
		})
	}
}
