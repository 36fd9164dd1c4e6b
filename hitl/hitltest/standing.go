package hitltest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/hitl"
)

// StandingContract checks a hitl.StandingStore. newStore must return a new,
// empty store for each call.
func StandingContract(t *testing.T, newStore func(t *testing.T) hitl.StandingStore) {
	ctx := context.Background()
	s := newStore(t)
	add := func(tool, args string) hitl.StandingAllow {
		t.Helper()
		a, err := s.AddStandingAllow(ctx, hitl.StandingAllow{Tool: tool, Args: args, AddedBy: "telegram:1", Added: base, Conv: "telegram:1"})
		if err != nil {
			t.Fatalf("AddStandingAllow(%s, %s): %v", tool, args, err)
		}
		return a
	}
	first := add("shell", `{"command":"ls"}`)
	second := add("shell", `{"command":"ls -la"}`)
	if first.ID <= 0 || second.ID <= first.ID {
		t.Errorf("IDs %d, %d: want positive and increasing", first.ID, second.ID)
	}
	if again := add("shell", `{"command":"ls"}`); again.ID != first.ID {
		t.Errorf("adding the same allow again gave ID %d, want the existing %d", again.ID, first.ID)
	}
	for _, c := range []struct {
		tool, args string
		want       bool
	}{
		{"shell", `{"command":"ls"}`, true},
		{"shell", `{"command":"ls -la"}`, true},
		{"shell", `{"command": "ls"}`, false},
		{"shell", `{"command":"l"}`, false},
		{"shell", `{"command":"ls; rm -rf /"}`, false},
		{"write_file", `{"command":"ls"}`, false},
	} {
		got, err := s.StandingAllowed(ctx, c.tool, c.args)
		if err != nil || got != c.want {
			t.Errorf("StandingAllowed(%s, %s) = %v, %v; want %v", c.tool, c.args, got, err, c.want)
		}
	}
	list, err := s.StandingAllows(ctx)
	if err != nil || len(list) != 2 || list[0].ID != first.ID || list[1].ID != second.ID {
		t.Fatalf("StandingAllows = %+v, %v; want the two allows in ID order", list, err)
	}
	if list[0].Tool != "shell" || list[0].Args != `{"command":"ls"}` || list[0].AddedBy != "telegram:1" ||
		!list[0].Added.Equal(base) || list[0].Conv != "telegram:1" {
		t.Errorf("stored allow = %+v", list[0])
	}
	removed, err := s.RemoveStandingAllow(ctx, first.ID)
	if err != nil || removed.Args != `{"command":"ls"}` {
		t.Errorf("RemoveStandingAllow = %+v, %v", removed, err)
	}
	if ok, _ := s.StandingAllowed(ctx, "shell", `{"command":"ls"}`); ok {
		t.Error("a removed allow still allows")
	}
	if _, err := s.RemoveStandingAllow(ctx, first.ID); !errors.Is(err, hitl.ErrNotFound) {
		t.Errorf("removing it again = %v, want ErrNotFound", err)
	}
}

// AuditContract checks a hitl.Audit. newAudit must return a new, empty log
// for each call.
func AuditContract(t *testing.T, newAudit func(t *testing.T) hitl.Audit) {
	ctx := context.Background()
	a := newAudit(t)
	entries := []hitl.AuditEntry{
		{At: base, Conv: "telegram:1", Tool: "shell", Args: `{}`, RequestedBy: "telegram:1", Outcome: "requested"},
		{At: base.Add(time.Minute), Conv: "telegram:1", Tool: "shell", RequestedBy: "telegram:1", ApprovedBy: "slack:U1", Outcome: "executed", Detail: "ok"},
		{At: base.Add(2 * time.Minute), Conv: "slack:C1", Tool: "read_file", RequestedBy: "slack:U2", Outcome: "allowed"},
		{At: base.Add(3 * time.Minute), Conv: "slack:C1", Tool: "shell", RequestedBy: "slack:U2", ApprovedBy: "slack:U1", Outcome: "denied"},
	}
	for _, e := range entries {
		if err := a.AppendAudit(ctx, e); err != nil {
			t.Fatalf("AppendAudit: %v", err)
		}
	}
	for _, c := range []struct {
		name string
		f    hitl.AuditFilter
		want []int
	}{
		{"all", hitl.AuditFilter{}, []int{0, 1, 2, 3}},
		{"conv", hitl.AuditFilter{Conv: "slack:C1"}, []int{2, 3}},
		{"tool", hitl.AuditFilter{Tool: "shell"}, []int{0, 1, 3}},
		{"outcome", hitl.AuditFilter{Outcome: "executed"}, []int{1}},
		{"since inclusive", hitl.AuditFilter{Since: base.Add(2 * time.Minute)}, []int{2, 3}},
		{"limit keeps newest", hitl.AuditFilter{Tool: "shell", Limit: 2}, []int{1, 3}},
		{"no match", hitl.AuditFilter{Conv: "discord:1"}, nil},
	} {
		got, err := a.QueryAudit(ctx, c.f)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %d entries, want %d", c.name, len(got), len(c.want))
			continue
		}
		for i, w := range c.want {
			want := entries[w]
			if !got[i].At.Equal(want.At) {
				t.Errorf("%s[%d]: at %v, want %v", c.name, i, got[i].At, want.At)
			}
			got[i].At = want.At
			if got[i] != want {
				t.Errorf("%s[%d] = %+v, want %+v", c.name, i, got[i], want)
			}
		}
	}
}
