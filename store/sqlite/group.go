package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// maxGroup bounds the statements one group commit holds.
const maxGroup = 64

// Statements of a group's savepoints, one around each member's statement.
const (
	savepoint  = "SAVEPOINT g"
	release    = "RELEASE g"
	rollbackTo = "ROLLBACK TO g"
)

// groupCommit folds the writer's single statements (db.exec) that wait
// for one another into one transaction. The first caller leads: on one
// thread it yields once, so that writers ready to run (with the bot's one
// thread, nothing else runs while it commits) join it, then commits itself and every
// statement queued so far (at most maxGroup) in one BEGIN/COMMIT, each
// statement inside a savepoint of its own, so that a failing one is rolled
// back alone and reported to its caller only. Every caller returns after
// the COMMIT that holds its statement: what a write guarantees is
// unchanged; a commit, its page writes and its file locks, are shared. A
// lone statement runs on its own, as before: a transaction through
// database/sql costs a goroutine, which pays only for two or more.
// Statements that arrive during a commit wait for it; the first of them
// leads the next group.
type groupCommit struct {
	mu      sync.Mutex
	leading bool            // a leader is running a group
	queue   []*pendingWrite // waiting for the next group, oldest first

	commits atomic.Int64 // commits of exec's statements (read by tests)
	hold    func()       // tests only: runs as the leader takes its group
}

// pendingWrite is one caller's statement and, once run, its outcome.
type pendingWrite struct {
	st   *sql.Stmt
	args []any
	res  sql.Result
	err  error
	lead bool          // set under mu: this caller leads the next group
	wake chan struct{} // receives once: the outcome is set, or lead is
}

// exec runs a cached statement on the writer, folded into a group commit
// with the writer's other statements waiting at the same time. ctx is
// checked while the statement waits for its group: a caller whose
// statement has not started gets ctx's error and its statement never
// runs; once started, it runs to its commit (see unwatched).
func (db *DB) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	wctx, st, err := db.prepare(ctx, db.w, query)
	if err != nil {
		return nil, err
	}
	w := &pendingWrite{st: st, args: args}
	g := &db.group
	g.mu.Lock()
	if !g.leading {
		g.leading = true
		g.mu.Unlock()
		if runtime.GOMAXPROCS(0) == 1 {
			// With more threads, the others' writers arrive during
			// the commit and form the next group; a yield would wake
			// an idle thread for nothing.
			runtime.Gosched()
		}
		db.lead(wctx, w)
		return w.res, w.err
	}
	w.wake = make(chan struct{}, 1)
	g.queue = append(g.queue, w)
	g.mu.Unlock()
	select {
	case <-w.wake:
	case <-ctx.Done():
		g.mu.Lock()
		if i := slices.Index(g.queue, w); i >= 0 {
			g.queue = slices.Delete(g.queue, i, i+1)
			g.mu.Unlock()
			return nil, ctx.Err()
		}
		g.mu.Unlock()
		<-w.wake // taken by a group, or made its leader: it runs
	}
	if w.lead {
		db.lead(wctx, w)
	}
	return w.res, w.err
}

// lead runs the group of w and whatever is queued, hands the lead to the
// first statement queued since, if any, and wakes the others.
func (db *DB) lead(ctx context.Context, w *pendingWrite) {
	g := &db.group
	if g.hold != nil {
		g.hold()
	}
	g.mu.Lock()
	n := min(len(g.queue), maxGroup-1)
	group := append([]*pendingWrite{w}, g.queue[:n]...)
	g.queue = slices.Delete(g.queue, 0, n)
	g.mu.Unlock()

	db.runGroup(ctx, group)

	g.mu.Lock()
	var next *pendingWrite
	if len(g.queue) > 0 {
		next = g.queue[0]
		g.queue = slices.Delete(g.queue, 0, 1)
		next.lead = true
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	for _, m := range group[1:] {
		m.wake <- struct{}{}
	}
	if next != nil {
		next.wake <- struct{}{}
	}
}

// runGroup runs the group's statements, a lone one on its own, two or
// more in one transaction, and sets each one's outcome.
func (db *DB) runGroup(ctx context.Context, group []*pendingWrite) {
	if len(group) == 1 {
		w := group[0]
		w.res, w.err = w.st.ExecContext(ctx, w.args...)
		if w.err == nil {
			db.group.commits.Add(1)
		}
		return
	}
	err := db.groupTx(ctx, group)
	if err != nil {
		err = fmt.Errorf("group commit: %w", err)
		for _, w := range group {
			if w.err == nil {
				w.res, w.err = nil, err
			}
		}
		return
	}
	db.group.commits.Add(1)
}

// groupTx runs the group in one transaction, each statement in a
// savepoint, and commits it. An error it returns undoes the whole
// transaction; a statement's own failure is only that statement's.
func (db *DB) groupTx(ctx context.Context, group []*pendingWrite) error {
	// Prepared before BEGIN: preparing takes the one writer connection,
	// which the transaction holds.
	var sp [3]*sql.Stmt
	for i, q := range []string{savepoint, release, rollbackTo} {
		var err error
		if sp[i], err = db.stmts.prepared(ctx, db.w, q); err != nil {
			return err
		}
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	run := func(st *sql.Stmt, args ...any) (sql.Result, error) {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	for _, w := range group {
		if _, err := run(sp[0]); err != nil {
			return errors.Join(err, rollback(tx))
		}
		w.res, w.err = run(w.st, w.args...)
		if w.err != nil {
			// The statement's savepoint must still exist: when SQLite
			// rolled the whole transaction back, the statements before
			// this one are undone and reported so.
			if _, err := run(sp[2]); err != nil {
				return errors.Join(err, rollback(tx))
			}
		}
		if _, err := run(sp[1]); err != nil {
			return errors.Join(err, rollback(tx))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
