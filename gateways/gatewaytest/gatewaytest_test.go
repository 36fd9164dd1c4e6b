package gatewaytest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// recorder is a testing.TB that records Errorf instead of failing the
// test, so that the helpers' failures can be checked.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errors...)
}

func TestNoSecretsFailsOnEachLeakingLineWithoutShowingTheSecret(t *testing.T) {
	r := &recorder{TB: t}
	NoSecrets(r, "ok\ntoken=abc-SECRET-123 sent\nfine\ncut: SECRET-1", "abc-SECRET-123", "SECRET-1")
	got := r.got()
	if len(got) != 2 || !strings.Contains(got[0], "line 2") || !strings.Contains(got[1], "line 4") {
		t.Fatalf("failures %q; want one for line 2 and one for line 4", got)
	}
	for _, e := range got {
		if strings.Contains(e, "SECRET") {
			t.Errorf("the failure shows the secret: %s", e)
		}
	}
	clean := &recorder{TB: t}
	NoSecrets(clean, "nothing to see\nhere", "abc-SECRET-123")
	if e := clean.got(); len(e) != 0 {
		t.Errorf("clean logs failed: %q", e)
	}
}

func TestRunnerStopChecksTheReturn(t *testing.T) {
	release := make(chan struct{}) // lets the run that ignores its context end with the test
	defer close(release)
	for _, tc := range []struct {
		name string
		run  func(context.Context) error
		want string
	}{
		{"nil on cancel", func(ctx context.Context) error { <-ctx.Done(); return nil }, ""},
		{"an error", func(ctx context.Context) error { <-ctx.Done(); return errors.New("boom") }, "Run returned boom"},
		{"never returns", func(context.Context) error { <-release; return nil }, "Run did not return within 10ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			run := NewRunner(r, "Run", 10*time.Millisecond)
			run.Go(tc.run)
			if returned, _ := run.Returned(); returned {
				t.Fatal("Returned before the context ended")
			}
			run.Stop()
			run.Stop() // a second Stop checks nothing more
			got := r.got()
			if tc.want == "" && len(got) != 0 || tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)) {
				t.Fatalf("failures %q; want %q", got, tc.want)
			}
		})
	}
}

var conv = core.Conversation{Gateway: "x", Chat: "1"}

func TestApprovalsRecordsPressesAndAnswers(t *testing.T) {
	a := NewApprovals("yes")
	hooked := 0
	a.OnPress(func() { hooked = len(a.Calls()) + 1 })
	if got := a.Press(context.Background(), "x:1", conv, "T1", 0, nil); got != "yes" {
		t.Fatalf("reply %q", got)
	}
	a.SetReply("no")
	if got := a.Press(context.Background(), "x:2", conv, "T2", 1, nil); got != "no" {
		t.Fatalf("reply %q after SetReply", got)
	}
	want := []Press{{From: "x:1", Conv: conv, Token: "T1", Decision: 0}, {From: "x:2", Conv: conv, Token: "T2", Decision: 1}}
	if got := a.Calls(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("calls %+v; want %+v", got, want)
	}
	if hooked != 2 {
		t.Errorf("the hook saw %d presses recorded before the second; want it to run before recording (1)", hooked-1)
	}
	a.Forget()
	if got := a.Calls(); len(got) != 0 {
		t.Errorf("calls after Forget: %+v", got)
	}
}

func TestWaitFirstReturnsTheFirstMatchOnceItCame(t *testing.T) {
	calls := 0
	list := func() []int {
		calls++
		if calls < 3 {
			return []int{1, 3}
		}
		return []int{1, 3, 4, 6}
	}
	if got := WaitFirst(t, "an even number", list, func(n int) bool { return n%2 == 0 }); got != 4 {
		t.Fatalf("WaitFirst = %d; want 4, the first even number", got)
	}
	if calls != 3 {
		t.Errorf("list called %d times; want 3 (WaitFirst returns as soon as one matches)", calls)
	}
}
