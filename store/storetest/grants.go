package storetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// GrantStore is what GrantContract tests: grants, numbered with the
// standing allows.
type GrantStore interface {
	store.Grants
	store.Standing
}

// grantEpoch is the time the grant contract's grants are given at.
var grantEpoch = time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC)

// grantOf is a grant of tool with args in conv by by, given at
// grantEpoch for d.
func grantOf(tool, args, conv, by string, d time.Duration) record.Grant {
	return record.Grant{Tool: tool, Args: args, Conv: conv, GrantedBy: core.Identity(by),
		Granted: grantEpoch, Expires: grantEpoch.Add(d), Files: map[string]string{"run.sh": "sha256:ab", "out": "absent"}}
}

// GrantContract tests a GrantStore (hitl.GrantStore): a grant is found
// for exactly its tool, arguments and conversation while it has not
// expired; granting the same call in the same conversation again by the
// same approver replaces it under its number; numbers come from the
// standing allows' series and are never used twice; a removed or expired
// grant is gone, and each expired grant is returned by one ExpireGrants
// only, however many run at once. newStores returns two stores on one
// fresh database (the same store twice where the store is a process's
// own): what one writes the other reads.
func GrantContract(t *testing.T, newStores func(t *testing.T) (a, b GrantStore)) {
	t.Helper()
	t.Run("found for exactly its call and conversation until it expires", func(t *testing.T) { grantFound(t, newStores) })
	t.Run("granted again: replaced under its number", func(t *testing.T) { grantReplaced(t, newStores) })
	t.Run("numbered with the standing allows", func(t *testing.T) { grantNumbers(t, newStores) })
	t.Run("removed and expired once across stores", func(t *testing.T) { grantRemovedAndExpired(t, newStores) })
}

// newGrantStores is GrantContract's newStores.
type newGrantStores = func(t *testing.T) (a, b GrantStore)

func grantFound(t *testing.T, newStores newGrantStores) {
	ctx := context.Background()
	a, b := newStores(t)
	long := `{"command":"` + strings.Repeat("x", 10000) + `"}`
	g, err := a.AddGrant(ctx, grantOf("shell", `{"command":"ls"}`, "gw:1", "gw:42", 2*time.Minute))
	if err != nil || g.ID <= 0 {
		t.Fatalf("AddGrant = %+v, %v", g, err)
	}
	gl, err := a.AddGrant(ctx, grantOf("shell", long, "gw:1", "gw:42", time.Hour))
	if err != nil {
		t.Fatalf("AddGrant with 10 KB of arguments: %v", err)
	}
	// The other store reads what the first wrote.
	list, err := b.GrantsFor(ctx, "shell", `{"command":"ls"}`, "gw:1", grantEpoch)
	if err != nil || len(list) != 1 || list[0].ID != g.ID || list[0].GrantedBy != "gw:42" ||
		!list[0].Expires.Equal(grantEpoch.Add(2*time.Minute)) || !list[0].Granted.Equal(grantEpoch) ||
		list[0].Files["run.sh"] != "sha256:ab" || list[0].Files["out"] != "absent" || len(list[0].Files) != 2 {
		t.Fatalf("GrantsFor = %+v, %v; want %+v", list, err, g)
	}
	if list, err := b.GrantsFor(ctx, "shell", long, "gw:1", grantEpoch); err != nil || len(list) != 1 || list[0].ID != gl.ID || list[0].Args != long {
		t.Errorf("GrantsFor the long call = %d grants, %v", len(list), err)
	}
	for _, c := range []struct{ tool, args, conv string }{
		{"shell", `{"command":"ls "}`, "gw:1"},
		{"shell", `{"command":"ls"}`, "gw:1:7"},
		{"shell", `{"command":"ls"}`, "other:1"},
		{"exec", `{"command":"ls"}`, "gw:1"},
	} {
		if list, err := b.GrantsFor(ctx, c.tool, c.args, c.conv, grantEpoch); err != nil || len(list) != 0 {
			t.Errorf("GrantsFor(%s, %s, %s) = %+v, %v; want none", c.tool, c.args, c.conv, list, err)
		}
	}
	at := grantEpoch.Add(2*time.Minute - time.Nanosecond)
	if list, err := b.GrantsFor(ctx, "shell", `{"command":"ls"}`, "gw:1", at); err != nil || len(list) != 1 {
		t.Errorf("GrantsFor just before the expiry = %+v, %v; want the grant", list, err)
	}
	at = grantEpoch.Add(2 * time.Minute)
	if list, err := b.GrantsFor(ctx, "shell", `{"command":"ls"}`, "gw:1", at); err != nil || len(list) != 0 {
		t.Errorf("GrantsFor at the expiry = %+v, %v; want none", list, err)
	}
	if all, err := b.Grants(ctx, at); err != nil || len(all) != 1 || all[0].ID != gl.ID {
		t.Errorf("Grants at the first's expiry = %d, %v; want the long one only", len(all), err)
	}
	if all, err := a.Grants(ctx, grantEpoch); err != nil || len(all) != 2 || all[0].ID != g.ID || all[1].ID != gl.ID {
		t.Errorf("Grants = %+v, %v; want both in ID order", all, err)
	}
	if _, err := a.AddGrant(ctx, grantOf("", "{}", "gw:1", "gw:42", time.Minute)); err == nil {
		t.Error("AddGrant without a tool accepted")
	}
}

func grantReplaced(t *testing.T, newStores newGrantStores) {
	ctx := context.Background()
	a, b := newStores(t)
	first, err := a.AddGrant(ctx, grantOf("shell", `{"command":"ls"}`, "gw:1", "gw:42", 2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	again := grantOf("shell", `{"command":"ls"}`, "gw:1", "gw:42", time.Hour)
	again.Files = map[string]string{"run.sh": "sha256:cd"}
	got, err := b.AddGrant(ctx, again)
	if err != nil || got.ID != first.ID || !got.Expires.Equal(grantEpoch.Add(time.Hour)) || got.Files["run.sh"] != "sha256:cd" || len(got.Files) != 1 {
		t.Fatalf("granted again = %+v, %v; want #%d until an hour later with the new binding", got, err, first.ID)
	}
	other, err := b.AddGrant(ctx, grantOf("shell", `{"command":"ls"}`, "gw:1", "gw:U9", 5*time.Minute))
	if err != nil || other.ID == first.ID {
		t.Fatalf("another approver's grant = %+v, %v; want a number of its own", other, err)
	}
	list, err := a.GrantsFor(ctx, "shell", `{"command":"ls"}`, "gw:1", grantEpoch)
	if err != nil || len(list) != 2 || list[0].ID != first.ID || !list[0].Expires.Equal(grantEpoch.Add(time.Hour)) || list[1].ID != other.ID {
		t.Errorf("GrantsFor = %+v, %v; want #%d (replaced) and #%d", list, err, first.ID, other.ID)
	}
}

func grantNumbers(t *testing.T, newStores newGrantStores) {
	ctx := context.Background()
	a, b := newStores(t)
	var ids []int64
	allow := func(s GrantStore, args string) {
		t.Helper()
		sa, err := s.AddStandingAllow(ctx, record.StandingAllow{Tool: "shell", Args: args, AddedBy: "gw:42", Added: grantEpoch, Files: map[string]string{}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sa.ID)
	}
	grant := func(s GrantStore, args string) {
		t.Helper()
		g, err := s.AddGrant(ctx, grantOf("shell", args, "gw:1", "gw:42", time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, g.ID)
	}
	allow(a, `{"command":"a"}`)
	grant(b, `{"command":"b"}`)
	allow(b, `{"command":"c"}`)
	grant(a, `{"command":"d"}`)
	if _, err := b.RemoveGrant(ctx, ids[3]); err != nil {
		t.Fatal(err)
	}
	if _, err := a.RemoveStandingAllow(ctx, ids[2]); err != nil {
		t.Fatal(err)
	}
	allow(a, `{"command":"e"}`)
	grant(b, `{"command":"f"}`)
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("numbers %v: want each new allow or grant numbered after all before it, removed ones included", ids)
		}
	}
	if _, err := a.RemoveStandingAllow(ctx, ids[1]); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("RemoveStandingAllow of grant #%d = %v; want record.ErrNotFound", ids[1], err)
	}
	if _, err := a.RemoveGrant(ctx, ids[0]); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("RemoveGrant of standing allow #%d = %v; want record.ErrNotFound", ids[0], err)
	}
}

func grantRemovedAndExpired(t *testing.T, newStores newGrantStores) {
	ctx := context.Background()
	a, b := newStores(t)
	short, err := a.AddGrant(ctx, grantOf("shell", `{"command":"ls"}`, "gw:1", "gw:42", time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	long, err := a.AddGrant(ctx, grantOf("shell", `{"command":"df"}`, "gw:1", "gw:42", time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	gone, err := a.AddGrant(ctx, grantOf("shell", `{"command":"id"}`, "gw:1", "gw:42", time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.RemoveGrant(ctx, gone.ID); err != nil || got.ID != gone.ID || got.Args != `{"command":"id"}` {
		t.Fatalf("RemoveGrant = %+v, %v", got, err)
	}
	if _, err := a.RemoveGrant(ctx, gone.ID); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("RemoveGrant again = %v; want record.ErrNotFound", err)
	}
	if list, err := a.ExpireGrants(ctx, grantEpoch.Add(time.Minute-time.Nanosecond)); err != nil || len(list) != 0 {
		t.Errorf("ExpireGrants before any expiry = %+v, %v", list, err)
	}
	at := grantEpoch.Add(time.Minute)
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got []record.Grant
	)
	for i := range 8 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			list, err := s.ExpireGrants(ctx, at)
			if err != nil {
				t.Errorf("ExpireGrants: %v", err)
			}
			mu.Lock()
			got = append(got, list...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(got) != 1 || got[0].ID != short.ID || got[0].GrantedBy != "gw:42" || got[0].Tool != "shell" {
		t.Fatalf("eight ExpireGrants at once returned %+v; want grant #%d once", got, short.ID)
	}
	if all, err := b.Grants(ctx, grantEpoch); err != nil || len(all) != 1 || all[0].ID != long.ID {
		t.Errorf("Grants after the expiry = %+v, %v; want #%d only (the expired one deleted)", all, err, long.ID)
	}
}
