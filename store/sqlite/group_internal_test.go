package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// held opens a database whose group leader stops, as it takes its group,
// until the returned release is called; entered receives when a leader
// has stopped there.
func held(t *testing.T) (db *DB, entered <-chan struct{}, release func()) {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "g.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan struct{}, 1)
	out := make(chan struct{})
	var once sync.Once
	db.group.hold = func() {
		select {
		case in <- struct{}{}:
		default:
		}
		<-out
	}
	return db, in, func() { once.Do(func() { close(out) }) }
}

// queued is how many statements wait for the next group.
func (db *DB) queued() int {
	db.group.mu.Lock()
	defer db.group.mu.Unlock()
	return len(db.group.queue)
}

// waitQueued waits until n statements wait behind the held leader.
func waitQueued(t *testing.T, db *DB, n int) {
	t.Helper()
	testutil.WaitFor(t, fmt.Sprintf("%d statements queued", n), func() bool { return db.queued() == n })
}

// TestGroupCommitFolds: appends that arrive while another commits are
// committed together, in one transaction, and each is stored.
func TestGroupCommitFolds(t *testing.T) {
	ctx := context.Background()
	db, entered, release := held(t)
	defer db.Close()
	defer release()
	const n = 8
	before := db.group.commits.Load()
	errs := make(chan error, n)
	append1 := func(i int) {
		errs <- db.Append(ctx, fmt.Sprintf("c%d", i), llm.Message{Role: llm.RoleUser, Content: fmt.Sprint("m", i)})
	}
	go append1(0)
	<-entered
	for i := 1; i < n; i++ {
		go append1(i)
	}
	waitQueued(t, db, n-1)
	release()
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := db.group.commits.Load() - before; got != 1 {
		t.Errorf("%d appends from %d goroutines took %d commits; want 1", n, n, got)
	}
	for i := range n {
		msgs, err := db.Load(ctx, fmt.Sprintf("c%d", i))
		if err != nil || len(msgs) != 1 || msgs[0].Content != fmt.Sprint("m", i) {
			t.Errorf("c%d: history %v, %v; want its one message", i, msgs, err)
		}
	}
}

// TestGroupCommitIsolatesFailure: a statement that fails inside a group
// is undone alone, whole (both rows of it), and reported to its caller
// only; every other caller gets its own result, committed.
func TestGroupCommitIsolatesFailure(t *testing.T) {
	ctx := context.Background()
	db, entered, release := held(t)
	defer db.Close()
	defer release()
	const n = 5
	type outcome struct {
		i    int
		rows int64
		err  error
	}
	out := make(chan outcome, n+1)
	insert := func(i int) {
		// Statement i inserts i+1 cursors: its own result says so.
		var vals []string
		var args []any
		for j := range i + 1 {
			vals = append(vals, "(?, 'v', 0)")
			args = append(args, fmt.Sprintf("k%d.%d", i, j))
		}
		res, err := db.exec(ctx, `INSERT INTO cursors (key, value, updated) VALUES `+strings.Join(vals, ", "), args...)
		o := outcome{i: i, err: err}
		if err == nil {
			o.rows, o.err = res.RowsAffected()
		}
		out <- o
	}
	go insert(0)
	<-entered
	for i := 1; i < n; i++ {
		go insert(i)
	}
	bad := make(chan error, 1)
	go func() {
		_, err := db.exec(ctx, `INSERT INTO cursors (key, value, updated) VALUES ('bad1', 'v', 0), ('bad2', NULL, 0)`)
		bad <- err
	}()
	waitQueued(t, db, n)
	before := db.group.commits.Load()
	release()
	for range n {
		o := <-out
		if o.err != nil || o.rows != int64(o.i+1) {
			t.Errorf("statement %d: %d rows, %v; want %d rows, no error", o.i, o.rows, o.err, o.i+1)
		}
	}
	if err := <-bad; err == nil || !strings.Contains(err.Error(), "NOT NULL") {
		t.Errorf("failing statement: %v; want its NOT NULL error", err)
	}
	if got := db.group.commits.Load() - before; got != 1 {
		t.Errorf("%d commits; want 1 (one group)", got)
	}
	var keys int
	if err := db.w.QueryRowContext(ctx, `SELECT COUNT(*) FROM cursors WHERE key LIKE 'k%'`).Scan(&keys); err != nil || keys != n*(n+1)/2 {
		t.Errorf("%d cursors stored, %v; want %d", keys, err, n*(n+1)/2)
	}
	for _, k := range []string{"bad1", "bad2"} {
		if v, err := db.Cursor(ctx, k); err != nil || v != "" {
			t.Errorf("cursor %s = %q, %v; want it never stored", k, v, err)
		}
	}
}

// TestGroupCommitCancelledWaiter: a caller cancelled while its statement
// waits for a group gets its context's error and the statement never
// runs; the group goes on without it.
func TestGroupCommitCancelledWaiter(t *testing.T) {
	ctx := context.Background()
	db, entered, release := held(t)
	defer db.Close()
	defer release()
	lead := make(chan error, 1)
	go func() { lead <- db.SetCursor(ctx, "a", "1") }()
	<-entered
	wctx, cancel := context.WithCancel(ctx)
	waiter := make(chan error, 1)
	go func() { waiter <- db.SetCursor(wctx, "b", "1") }()
	other := make(chan error, 1)
	waitQueued(t, db, 1)
	go func() { other <- db.SetCursor(ctx, "c", "1") }()
	waitQueued(t, db, 2)
	cancel()
	select {
	case err := <-waiter:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled waiter: %v; want context.Canceled", err)
		}
	case <-time.After(testutil.HangGuard):
		t.Fatal("a cancelled waiter still waited for its group")
	}
	release()
	if err := errors.Join(<-lead, <-other); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"a": "1", "b": "", "c": "1"} {
		if v, err := db.Cursor(ctx, k); err != nil || v != want {
			t.Errorf("cursor %s = %q, %v; want %q", k, v, err, want)
		}
	}
}

// TestGroupCommitClose: statements waiting for a group when the database
// is closed each get an error; none hangs.
func TestGroupCommitClose(t *testing.T) {
	ctx := context.Background()
	db, entered, release := held(t)
	defer release()
	const n = 4
	errs := make(chan error, n)
	set := func(i int) { errs <- db.SetCursor(ctx, fmt.Sprint("k", i), "v") }
	go set(0)
	<-entered
	for i := 1; i < n; i++ {
		go set(i)
	}
	waitQueued(t, db, n-1)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	release()
	for range n {
		select {
		case err := <-errs:
			if err == nil {
				t.Error("a write after Close succeeded")
			}
		case <-time.After(testutil.HangGuard):
			t.Fatal("a write waiting for its group hung after Close")
		}
	}
}
