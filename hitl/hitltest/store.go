// Package hitltest holds contract tests that every implementation of the
// hitl storage interfaces (hitl.Store, hitl.Audit, hitl.StandingStore) must
// pass. The in-memory stores run them in package hitl; persistent stores run
// the same functions against their own constructors.
package hitltest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// base is the contract's reference time, whole seconds in UTC so that
// stores with coarse time columns compare exactly.
var base = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// sample returns a pending approval created at base+offset, expiring 15
// minutes later.
func sample(token string, offset time.Duration) record.Approval {
	created := base.Add(offset)
	call := llm.ToolCall{ID: "call_" + token, Name: "shell", Args: `{"command":"ls -la"}`}
	return record.Approval{
		Token:       token,
		Conv:        core.Conversation{Gateway: "alpha", Chat: "-100123", Thread: "7"},
		RequestedBy: "alpha:42",
		Call:        call,
		Digest:      hitl.Digest(call),
		Rule:        "shell",
		Reason:      "shell needs approval",
		Created:     created,
		Expires:     created.Add(15 * time.Minute),
		Status:      record.StatusPending,
	}
}

// StoreContract checks a hitl.Store. newStore must return a new, empty
// store for each call.
func StoreContract(t *testing.T, newStore func(t *testing.T) hitl.Store) {
	t.Run("CreateAndGet", func(t *testing.T) { testCreateAndGet(t, newStore(t)) })
	t.Run("Claim", func(t *testing.T) { testClaim(t, newStore(t)) })
	t.Run("ClaimDeny", func(t *testing.T) { testClaimDeny(t, newStore(t)) })
	t.Run("ExpiryBoundary", func(t *testing.T) { testExpiryBoundary(t, newStore(t)) })
	t.Run("ConcurrentClaims", func(t *testing.T) { testConcurrentClaims(t, newStore(t)) })
	t.Run("Finish", func(t *testing.T) { testFinish(t, newStore(t)) })
	t.Run("Expire", func(t *testing.T) { testExpire(t, newStore(t)) })
	t.Run("List", func(t *testing.T) { testList(t, newStore(t)) })
	t.Run("Nudges", func(t *testing.T) { testNudges(t, newStore(t)) })
	t.Run("ConcurrentNudges", func(t *testing.T) { testConcurrentNudges(t, newStore(t)) })
}

func testCreateAndGet(t *testing.T, s hitl.Store) {
	ctx := context.Background()
	want := sample("K7Q2MX9P", 0)
	mustCreate(t, s, want)
	got, err := s.Approval(ctx, want.Token)
	if err != nil {
		t.Fatalf("Approval: %v", err)
	}
	checkApproval(t, got, want)
	if err := s.CreateApproval(ctx, sample("K7Q2MX9P", time.Second)); !errors.Is(err, record.ErrDuplicate) {
		t.Errorf("CreateApproval of a stored token = %v, want ErrDuplicate", err)
	}
	if _, err := s.Approval(ctx, "ZZZZZZZZ"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("Approval of an unknown token = %v, want ErrNotFound", err)
	}
}

func testClaim(t *testing.T, s hitl.Store) {
	ctx := context.Background()
	mustCreate(t, s, sample("AAAAAAAA", 0))
	now := base.Add(time.Minute)
	got, err := s.ClaimApproval(ctx, "AAAAAAAA", record.StatusExecuting, "slack:U1", "", now)
	if err != nil {
		t.Fatalf("ClaimApproval: %v", err)
	}
	if got.Status != record.StatusExecuting || got.ResolvedBy != "slack:U1" || !got.ResolvedAt.Equal(now) {
		t.Errorf("claimed = %s by %q at %v, want executing by slack:U1 at %v", got.Status, got.ResolvedBy, got.ResolvedAt, now)
	}
	again, err := s.ClaimApproval(ctx, "AAAAAAAA", record.StatusExecuting, "slack:U2", "", now)
	if !errors.Is(err, record.ErrNotPending) {
		t.Fatalf("second ClaimApproval = %v, want ErrNotPending", err)
	}
	if again.Status != record.StatusExecuting || again.ResolvedBy != "slack:U1" {
		t.Errorf("second claim reports %s by %q, want executing by slack:U1 (the approval as it is)", again.Status, again.ResolvedBy)
	}
	if _, err := s.ClaimApproval(ctx, "ZZZZZZZZ", record.StatusExecuting, "slack:U1", "", now); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("claim of an unknown token = %v, want ErrNotFound", err)
	}
	mustCreate(t, s, sample("BBBBBBBB", 0))
	if _, err := s.ClaimApproval(ctx, "BBBBBBBB", record.StatusExecuted, "slack:U1", "", now); err == nil {
		t.Error("claim to StatusExecuted succeeded, want an error (only executing or denied)")
	}
	if got := mustGet(t, s, "BBBBBBBB"); got.Status != record.StatusPending {
		t.Errorf("after a refused claim the status is %s, want pending", got.Status)
	}
}

func testClaimDeny(t *testing.T, s hitl.Store) {
	ctx := context.Background()
	mustCreate(t, s, sample("CCCCCCCC", 0))
	if _, err := s.ClaimApproval(ctx, "CCCCCCCC", record.StatusDenied, "discord:9", "too risky", base); err != nil {
		t.Fatalf("deny claim: %v", err)
	}
	got := mustGet(t, s, "CCCCCCCC")
	if got.Status != record.StatusDenied || got.ResolvedBy != "discord:9" || got.Note != "too risky" {
		t.Errorf("denied approval = %s by %q note %q", got.Status, got.ResolvedBy, got.Note)
	}
	if _, err := s.ClaimApproval(ctx, "CCCCCCCC", record.StatusExecuting, "discord:9", "", base); !errors.Is(err, record.ErrNotPending) {
		t.Errorf("approve after deny = %v, want ErrNotPending", err)
	}
}

func testExpiryBoundary(t *testing.T, s hitl.Store) {
	ctx := context.Background()
	a := sample("DDDDDDDD", 0)
	mustCreate(t, s, a)
	if _, err := s.ClaimApproval(ctx, a.Token, record.StatusExecuting, "term:local", "", a.Expires); !errors.Is(err, record.ErrNotPending) {
		t.Errorf("claim at the expiry instant = %v, want ErrNotPending", err)
	}
	if _, err := s.ClaimApproval(ctx, a.Token, record.StatusExecuting, "term:local", "", a.Expires.Add(time.Hour)); !errors.Is(err, record.ErrNotPending) {
		t.Errorf("claim after expiry = %v, want ErrNotPending", err)
	}
	if got := mustGet(t, s, a.Token); got.Status != record.StatusPending {
		t.Errorf("a refused late claim changed the status to %s", got.Status)
	}
	if _, err := s.ClaimApproval(ctx, a.Token, record.StatusExecuting, "term:local", "", a.Expires.Add(-time.Second)); err != nil {
		t.Errorf("claim a second before expiry = %v, want success", err)
	}
}

func testConcurrentClaims(t *testing.T, s hitl.Store) {
	ctx := context.Background()
	mustCreate(t, s, sample("EEEEEEEE", 0))
	const n = 50
	var (
		wins, lost atomic.Int32
		wg         sync.WaitGroup
	)
	for i := range n {
		wg.Go(func() {
			to := record.StatusExecuting
			if i%2 == 1 {
				to = record.StatusDenied
			}
			_, err := s.ClaimApproval(ctx, "EEEEEEEE", to, "alpha:1", "", base)
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, record.ErrNotPending):
				lost.Add(1)
			default:
				t.Errorf("concurrent claim: %v", err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 || lost.Load() != n-1 {
		t.Errorf("of %d concurrent claims %d won and %d got ErrNotPending, want 1 and %d", n, wins.Load(), lost.Load(), n-1)
	}
}

func testFinish(t *testing.T, s hitl.Store) {
	ctx := context.Background()
	mustCreate(t, s, sample("FFFFFFFF", 0))
	if err := s.FinishApproval(ctx, "FFFFFFFF", record.StatusExecuted, "ok", base); !errors.Is(err, record.ErrNotPending) {
		t.Errorf("finish of a pending approval = %v, want ErrNotPending", err)
	}
	if _, err := s.ClaimApproval(ctx, "FFFFFFFF", record.StatusExecuting, "term:local", "", base); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishApproval(ctx, "FFFFFFFF", record.StatusExecuted, "total 0", base.Add(time.Second)); err != nil {
		t.Fatalf("finish: %v", err)
	}
	got := mustGet(t, s, "FFFFFFFF")
	if got.Status != record.StatusExecuted || got.Note != "total 0" || got.ResolvedBy != "term:local" {
		t.Errorf("finished approval = %s note %q by %q", got.Status, got.Note, got.ResolvedBy)
	}
	if err := s.FinishApproval(ctx, "FFFFFFFF", record.StatusFailed, "again", base); !errors.Is(err, record.ErrNotPending) {
		t.Errorf("second finish = %v, want ErrNotPending", err)
	}
	if err := s.FinishApproval(ctx, "ZZZZZZZZ", record.StatusExecuted, "", base); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("finish of an unknown token = %v, want ErrNotFound", err)
	}
	for tok, to := range map[string]record.Status{"GGGGGGGF": record.StatusFailed, "GGGGGGGR": record.StatusInterrupted} {
		mustCreate(t, s, sample(tok, 0))
		if _, err := s.ClaimApproval(ctx, tok, record.StatusExecuting, "term:local", "", base); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishApproval(ctx, tok, to, "x", base); err != nil {
			t.Errorf("finish to %s: %v", to, err)
		}
		if got := mustGet(t, s, tok); got.Status != to {
			t.Errorf("finish to %s left status %s", to, got.Status)
		}
	}
}

func testExpire(t *testing.T, s hitl.Store) {
	ctx := context.Background()
	a := sample("HHHHHHHH", 0)
	mustCreate(t, s, a)
	if err := s.FinishApproval(ctx, a.Token, record.StatusExpired, "late", a.Expires.Add(-time.Second)); !errors.Is(err, record.ErrNotPending) {
		t.Errorf("expire before the expiry = %v, want ErrNotPending", err)
	}
	if err := s.FinishApproval(ctx, a.Token, record.StatusExpired, "late", a.Expires); err != nil {
		t.Fatalf("expire at the expiry: %v", err)
	}
	if got := mustGet(t, s, a.Token); got.Status != record.StatusExpired {
		t.Errorf("status after expiry = %s", got.Status)
	}
	if err := s.FinishApproval(ctx, a.Token, record.StatusExpired, "late", a.Expires); !errors.Is(err, record.ErrNotPending) {
		t.Errorf("second expire = %v, want ErrNotPending (announce once)", err)
	}
	b := sample("JJJJJJJJ", 0)
	mustCreate(t, s, b)
	if _, err := s.ClaimApproval(ctx, b.Token, record.StatusExecuting, "term:local", "", base); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishApproval(ctx, b.Token, record.StatusExpired, "late", b.Expires.Add(time.Hour)); !errors.Is(err, record.ErrNotPending) {
		t.Errorf("expire of an executing approval = %v, want ErrNotPending", err)
	}
}

func testList(t *testing.T, s hitl.Store) {
	ctx := context.Background()
	mustCreate(t, s, sample("MMMMMMMM", 2*time.Second))
	mustCreate(t, s, sample("KKKKKKKK", 0))
	mustCreate(t, s, sample("NNNNNNNN", time.Second))
	if _, err := s.ClaimApproval(ctx, "NNNNNNNN", record.StatusDenied, "term:local", "", base.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	pending, err := s.Approvals(ctx, record.StatusPending)
	if err != nil {
		t.Fatalf("Approvals: %v", err)
	}
	checkTokens(t, "pending", pending, "KKKKKKKK", "MMMMMMMM")
	both, err := s.Approvals(ctx, record.StatusPending, record.StatusDenied)
	if err != nil {
		t.Fatal(err)
	}
	checkTokens(t, "pending+denied", both, "KKKKKKKK", "NNNNNNNN", "MMMMMMMM")
	all, err := s.Approvals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkTokens(t, "all", all, "KKKKKKKK", "NNNNNNNN", "MMMMMMMM")
	none, err := s.Approvals(ctx, record.StatusExecuted)
	if err != nil || len(none) != 0 {
		t.Errorf("Approvals(executed) = %d, %v; want none", len(none), err)
	}
}

func mustCreate(t *testing.T, s hitl.Store, a record.Approval) {
	t.Helper()
	if err := s.CreateApproval(context.Background(), a); err != nil {
		t.Fatalf("CreateApproval(%s): %v", a.Token, err)
	}
}

func mustGet(t *testing.T, s hitl.Store, token string) record.Approval {
	t.Helper()
	a, err := s.Approval(context.Background(), token)
	if err != nil {
		t.Fatalf("Approval(%s): %v", token, err)
	}
	return a
}

func checkTokens(t *testing.T, what string, got []record.Approval, want ...string) {
	t.Helper()
	var toks []string
	for _, a := range got {
		toks = append(toks, a.Token)
	}
	if len(toks) != len(want) {
		t.Errorf("%s: tokens %v, want %v", what, toks, want)
		return
	}
	for i := range want {
		if toks[i] != want[i] {
			t.Errorf("%s: tokens %v, want %v (oldest first)", what, toks, want)
			return
		}
	}
}

// checkApproval compares every field, times with Equal.
func checkApproval(t *testing.T, got, want record.Approval) {
	t.Helper()
	if !got.Created.Equal(want.Created) || !got.Expires.Equal(want.Expires) || !got.ResolvedAt.Equal(want.ResolvedAt) {
		t.Errorf("times: got created %v expires %v resolved %v, want %v %v %v",
			got.Created, got.Expires, got.ResolvedAt, want.Created, want.Expires, want.ResolvedAt)
	}
	got.Created, got.Expires, got.ResolvedAt = want.Created, want.Expires, want.ResolvedAt
	if got != want {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
}
