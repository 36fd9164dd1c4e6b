package hitltest

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// StandingContract checks a hitl.StandingStore. newStore must return a new,
// empty store for each call.
func StandingContract(t *testing.T, newStore func(t *testing.T) hitl.StandingStore) {
	ctx := context.Background()
	s := newStore(t)
	add := func(tool, args string) record.StandingAllow {
		t.Helper()
		a, err := s.AddStandingAllow(ctx, record.StandingAllow{Tool: tool, Args: args, AddedBy: "alpha:1", Added: base, Conv: "alpha:1"})
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
		got, err := s.StandingAllowFor(ctx, c.tool, c.args)
		switch {
		case c.want && (err != nil || got.Tool != c.tool || got.Args != c.args):
			t.Errorf("StandingAllowFor(%s, %s) = %+v, %v; want the allow", c.tool, c.args, got, err)
		case !c.want && !errors.Is(err, record.ErrNotFound):
			t.Errorf("StandingAllowFor(%s, %s) = %+v, %v; want ErrNotFound", c.tool, c.args, got, err)
		}
	}
	list, err := s.StandingAllows(ctx)
	if err != nil || len(list) != 2 || list[0].ID != first.ID || list[1].ID != second.ID {
		t.Fatalf("StandingAllows = %+v, %v; want the two allows in ID order", list, err)
	}
	if list[0].Tool != "shell" || list[0].Args != `{"command":"ls"}` || list[0].AddedBy != "alpha:1" ||
		!list[0].Added.Equal(base) || list[0].Conv != "alpha:1" {
		t.Errorf("stored allow = %+v", list[0])
	}
	removed, err := s.RemoveStandingAllow(ctx, first.ID)
	if err != nil || removed.Args != `{"command":"ls"}` {
		t.Errorf("RemoveStandingAllow = %+v, %v", removed, err)
	}
	if _, err := s.StandingAllowFor(ctx, "shell", `{"command":"ls"}`); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("a removed allow is still found: %v", err)
	}
	if _, err := s.RemoveStandingAllow(ctx, first.ID); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("removing it again = %v, want ErrNotFound", err)
	}
	standingFilesContract(t, newStore(t))
}

// standingFilesContract checks that an allow keeps the files it binds, and
// that adding the same call again rebinds them under the same ID.
func standingFilesContract(t *testing.T, s hitl.StandingStore) {
	ctx := context.Background()
	bound := map[string]string{"run.sh": "sha256:" + strings.Repeat("ab", 32), "sh": "absent", "sub dir/x.py": "dir"}
	add := func(files map[string]string, by string) record.StandingAllow {
		t.Helper()
		a, err := s.AddStandingAllow(ctx, record.StandingAllow{Tool: "shell", Args: `{"command":"sh run.sh"}`,
			AddedBy: core.Identity(by), Added: base, Conv: "alpha:1", Files: files})
		if err != nil {
			t.Fatalf("AddStandingAllow: %v", err)
		}
		return a
	}
	first := add(bound, "alpha:1")
	bound["run.sh"] = "changed after adding" // the store must have copied the map
	got, err := s.StandingAllowFor(ctx, "shell", `{"command":"sh run.sh"}`)
	want := map[string]string{"run.sh": "sha256:" + strings.Repeat("ab", 32), "sh": "absent", "sub dir/x.py": "dir"}
	if err != nil || got.ID != first.ID || !maps.Equal(got.Files, want) {
		t.Fatalf("StandingAllowFor = %+v, %v; want ID %d with files %v", got, err, first.ID, want)
	}
	rebound := map[string]string{"run.sh": "sha256:" + strings.Repeat("cd", 32), "sh": "absent"}
	again := add(rebound, "slack:U2")
	if again.ID != first.ID || !maps.Equal(again.Files, rebound) || again.AddedBy != "slack:U2" {
		t.Errorf("adding the call again = %+v; want ID %d rebound to %v by slack:U2", again, first.ID, rebound)
	}
	list, err := s.StandingAllows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		if a.ID == first.ID && !maps.Equal(a.Files, rebound) {
			t.Errorf("StandingAllows lists files %v, want %v", a.Files, rebound)
		}
	}
	none := record.StandingAllow{Tool: "current_time", Args: `{}`, AddedBy: "alpha:1", Added: base, Files: map[string]string{}}
	if _, err := s.AddStandingAllow(ctx, none); err != nil {
		t.Fatal(err)
	}
	if got, err := s.StandingAllowFor(ctx, "current_time", `{}`); err != nil || got.Files == nil || len(got.Files) != 0 {
		t.Errorf("an allow binding no files = %+v, %v; want empty, non-nil Files", got, err)
	}
}

// AuditContract checks a hitl.Audit. newAudit must return a new, empty log
// for each call.
func AuditContract(t *testing.T, newAudit func(t *testing.T) hitl.Audit) {
	ctx := context.Background()
	a := newAudit(t)
	entries := []record.AuditEntry{
		{At: base, Conv: "alpha:1", Tool: "shell", Args: `{}`, RequestedBy: "alpha:1", Outcome: "requested"},
		{At: base.Add(time.Minute), Conv: "alpha:1", Tool: "shell", RequestedBy: "alpha:1", ApprovedBy: "slack:U1", Outcome: "executed", Detail: "ok"},
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
		f    record.AuditFilter
		want []int
	}{
		{"all", record.AuditFilter{}, []int{0, 1, 2, 3}},
		{"conv", record.AuditFilter{Conv: "slack:C1"}, []int{2, 3}},
		{"tool", record.AuditFilter{Tool: "shell"}, []int{0, 1, 3}},
		{"outcome", record.AuditFilter{Outcome: "executed"}, []int{1}},
		{"since inclusive", record.AuditFilter{Since: base.Add(2 * time.Minute)}, []int{2, 3}},
		{"limit keeps newest", record.AuditFilter{Tool: "shell", Limit: 2}, []int{1, 3}},
		{"no match", record.AuditFilter{Conv: "discord:1"}, nil},
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
