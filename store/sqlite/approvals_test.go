package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/store/record"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 987654321, time.UTC)

// pending returns a pending approval created at t0 that expires 15 minutes
// later.
func pending(token string) record.Approval {
	return record.Approval{
		Token:       token,
		Conv:        core.Conversation{Gateway: "slack", Chat: "C1", Thread: "1712.5"},
		RequestedBy: "slack:U1",
		Call:        llm.ToolCall{ID: "call_1", Name: "shell", Args: `{"command":"rm -rf ./build"}`},
		Digest:      "sha256:abc",
		Rule:        "shell",
		Reason:      "shell needs approval",
		Created:     t0,
		Expires:     t0.Add(15 * time.Minute),
		Status:      record.StatusPending,
	}
}

func mustCreate(t *testing.T, s hitl.Store, a record.Approval) {
	t.Helper()
	if err := s.CreateApproval(context.Background(), a); err != nil {
		t.Fatalf("CreateApproval(%s): %v", a.Token, err)
	}
}

func assertApproval(t *testing.T, got, want record.Approval) {
	t.Helper()
	for _, p := range [][2]time.Time{{got.Created, want.Created}, {got.Expires, want.Expires}, {got.ResolvedAt, want.ResolvedAt}} {
		if !p[0].Equal(p[1]) {
			t.Fatalf("approval times: got %v, want %v", p[0], p[1])
		}
	}
	got.Created, got.Expires, got.ResolvedAt = want.Created, want.Expires, want.ResolvedAt
	if got != want {
		t.Fatalf("approval:\n got  %+v\n want %+v", got, want)
	}
}

func TestApprovalCreateGet(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, sqlite.Options{})
	want := pending("K7QX")
	mustCreate(t, db, want)
	got, err := db.Approval(ctx, "K7QX")
	if err != nil {
		t.Fatalf("Approval: %v", err)
	}
	assertApproval(t, got, want)
	if _, err := db.Approval(ctx, "NOPE"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("Approval(unknown) error = %v; want ErrNotFound", err)
	}
	if err := db.CreateApproval(ctx, pending("K7QX")); !errors.Is(err, record.ErrDuplicate) {
		t.Errorf("CreateApproval(duplicate) error = %v; want ErrDuplicate", err)
	}
	if err := db.CreateApproval(ctx, pending("")); err == nil {
		t.Error("CreateApproval(empty token) succeeded")
	}
}

func TestClaimApproval(t *testing.T) {
	tests := []struct {
		name    string
		to      record.Status
		now     time.Time
		wantErr error
	}{
		{"approve", record.StatusExecuting, t0.Add(time.Minute), nil},
		{"deny", record.StatusDenied, t0.Add(time.Minute), nil},
		{"at expiry", record.StatusExecuting, t0.Add(15 * time.Minute), record.ErrNotPending},
		{"after expiry", record.StatusDenied, t0.Add(time.Hour), record.ErrNotPending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTemp(t, sqlite.Options{})
			mustCreate(t, db, pending("TOK"))
			got, err := db.ClaimApproval(context.Background(), "TOK", tt.to, "telegram:42", "ok", tt.now)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ClaimApproval error = %v; want %v", err, tt.wantErr)
			}
			want := pending("TOK")
			if tt.wantErr == nil {
				want.Status, want.ResolvedBy, want.ResolvedAt, want.Note = tt.to, "telegram:42", tt.now, "ok"
			}
			assertApproval(t, got, want)
			stored, err := db.Approval(context.Background(), "TOK")
			if err != nil {
				t.Fatalf("Approval: %v", err)
			}
			assertApproval(t, stored, want)
		})
	}
}

func TestClaimApprovalTwiceAndUnknown(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, sqlite.Options{})
	mustCreate(t, db, pending("TOK"))
	now := t0.Add(time.Minute)
	if _, err := db.ClaimApproval(ctx, "TOK", record.StatusDenied, "telegram:1", "no", now); err != nil {
		t.Fatalf("first claim: %v", err)
	}
	got, err := db.ClaimApproval(ctx, "TOK", record.StatusExecuting, "telegram:2", "", now)
	if !errors.Is(err, record.ErrNotPending) || got.ResolvedBy != "telegram:1" || got.Status != record.StatusDenied {
		t.Fatalf("second claim = %+v, %v; want the denial by telegram:1 and ErrNotPending", got, err)
	}
	if _, err := db.ClaimApproval(ctx, "NOPE", record.StatusExecuting, "telegram:2", "", now); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("claim of unknown token error = %v; want ErrNotFound", err)
	}
	if _, err := db.ClaimApproval(ctx, "TOK", record.StatusExecuted, "telegram:2", "", now); err == nil {
		t.Fatal("claim to executed succeeded; only executing and denied are claims")
	}
}

func TestFinishApproval(t *testing.T) {
	executing, denied := record.StatusExecuting, record.StatusDenied
	tests := []struct {
		name    string
		claim   *record.Status // claim first, at t0+1m
		to      record.Status
		now     time.Time
		wantErr error
	}{
		{"executed", &executing, record.StatusExecuted, t0.Add(2 * time.Minute), nil},
		{"failed", &executing, record.StatusFailed, t0.Add(2 * time.Minute), nil},
		{"interrupted", &executing, record.StatusInterrupted, t0.Add(2 * time.Minute), nil},
		{"expired at expiry", nil, record.StatusExpired, t0.Add(15 * time.Minute), nil},
		{"expired too early", nil, record.StatusExpired, t0.Add(14 * time.Minute), record.ErrNotPending},
		{"executed while pending", nil, record.StatusExecuted, t0.Add(time.Minute), record.ErrNotPending},
		{"executed after deny", &denied, record.StatusExecuted, t0.Add(2 * time.Minute), record.ErrNotPending},
		{"expired after claim", &executing, record.StatusExpired, t0.Add(time.Hour), record.ErrNotPending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := openTemp(t, sqlite.Options{})
			mustCreate(t, db, pending("TOK"))
			want := pending("TOK")
			if tt.claim != nil {
				claimed, err := db.ClaimApproval(ctx, "TOK", *tt.claim, "telegram:42", "claimed", t0.Add(time.Minute))
				if err != nil {
					t.Fatalf("ClaimApproval: %v", err)
				}
				want = claimed
			}
			err := db.FinishApproval(ctx, "TOK", tt.to, "done", tt.now)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("FinishApproval error = %v; want %v", err, tt.wantErr)
			}
			if err == nil {
				want.Status, want.Note = tt.to, "done"
				if tt.to == record.StatusExpired {
					want.ResolvedAt = tt.now
				}
			}
			got, err := db.Approval(ctx, "TOK")
			if err != nil {
				t.Fatalf("Approval: %v", err)
			}
			assertApproval(t, got, want)
		})
	}
}

func TestFinishApprovalUnknownAndInvalid(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, sqlite.Options{})
	if err := db.FinishApproval(ctx, "NOPE", record.StatusExecuted, "", t0); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("FinishApproval(unknown) error = %v; want ErrNotFound", err)
	}
	mustCreate(t, db, pending("TOK"))
	if err := db.FinishApproval(ctx, "TOK", record.StatusPending, "", t0); err == nil || errors.Is(err, record.ErrNotPending) {
		t.Errorf("FinishApproval(to pending) error = %v; want an invalid-status error", err)
	}
}

func TestApprovalsList(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, sqlite.Options{})
	// Created out of token order, and out of creation order.
	for i, tok := range []string{"C", "A", "D", "B"} {
		a := pending(tok)
		a.Created = t0.Add(time.Duration([]int{3, 1, 4, 2}[i]) * time.Second)
		mustCreate(t, db, a)
	}
	if _, err := db.ClaimApproval(ctx, "B", record.StatusDenied, "telegram:1", "", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ClaimApproval(ctx, "D", record.StatusExecuting, "telegram:1", "", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		statuses []record.Status
		want     string
	}{
		{nil, "[A B C D]"},
		{[]record.Status{record.StatusPending}, "[A C]"},
		{[]record.Status{record.StatusDenied, record.StatusExecuting}, "[B D]"},
		{[]record.Status{record.StatusExpired}, "[]"},
	}
	for _, tt := range tests {
		got, err := db.Approvals(ctx, tt.statuses...)
		if err != nil {
			t.Fatalf("Approvals(%v): %v", tt.statuses, err)
		}
		var toks []string
		for _, a := range got {
			toks = append(toks, a.Token)
		}
		if fmt.Sprint(toks) != tt.want {
			t.Errorf("Approvals(%v) = %v; want %s", tt.statuses, toks, tt.want)
		}
	}
}

// TestConcurrentClaimsExactlyOnce: 100 goroutines claim one token against
// the real file, through two handles opened on it (as two processes would);
// exactly one wins, the rest see ErrNotPending and the winner's claim. The
// store's lock keeps a second instance off the file, so the second handle
// is opened past the lock (a test hook): the claim itself is atomic even
// without the lock.
func TestConcurrentClaimsExactlyOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gatehouse.db")
	db := openAt(t, path, sqlite.Options{})
	second, err := sqlite.OpenWithoutLock(ctx, path, sqlite.Options{})
	mustNoErr(t, err)
	t.Cleanup(func() { second.Close() })
	handles := []*sqlite.DB{db, second}
	mustCreate(t, db, pending("RACE"))
	const n = 100
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []core.Identity
		others  []error
	)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			by := core.Identity(fmt.Sprint("telegram:", i))
			<-start
			a, err := handles[i%2].ClaimApproval(ctx, "RACE", record.StatusExecuting, by, "", t0.Add(time.Minute))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				winners = append(winners, by)
			case errors.Is(err, record.ErrNotPending) && a.Status == record.StatusExecuting:
			default:
				others = append(others, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(winners) != 1 || len(others) != 0 {
		t.Fatalf("winners = %v, unexpected errors = %v; want exactly one winner", winners, others)
	}
	got, err := db.Approval(ctx, "RACE")
	if err != nil || got.Status != record.StatusExecuting || got.ResolvedBy != winners[0] {
		t.Fatalf("stored = %+v, %v; want executing, resolved by %s", got, err, winners[0])
	}
}
