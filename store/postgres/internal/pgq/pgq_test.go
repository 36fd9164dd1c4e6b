package pgq

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
)

// newPool is a pool of size on a fresh database, closed when t ends.
func newPool(t *testing.T, size int, pingIdle time.Duration) *Pool {
	t.Helper()
	cfg, err := ParseConfig(pgtest.DSN(t) + "&application_name=pgqtest")
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns, cfg.PingIdle = size, pingIdle
	p := NewPool(cfg)
	t.Cleanup(p.Close)
	return p
}

type name string

// TestTypesRoundTrip: every type the store passes comes back as it went,
// by value, through NULLs, pointers, named types and arrays: every byte
// value in bytea, the integers' extremes, text with quotes, backslashes
// and braces (in arrays too).
func TestTypesRoundTrip(t *testing.T) {
	p := newPool(t, 2, time.Second)
	ctx := t.Context()
	if _, err := p.Exec(ctx, `CREATE TABLE v (s text, b bytea, i bigint, n integer, ok boolean, f double precision, j json)`); err != nil {
		t.Fatal(err)
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	texts := []string{"", "plain", `a"b`, `c\d`, "{x,y}", "NULL", "é ✓ 😀", "line\nbreak\ttab"}
	for _, s := range texts {
		for _, i := range []int64{math.MinInt64, -1, 0, math.MaxInt64} {
			for _, n := range []int32{math.MinInt32, math.MaxInt32} {
				if _, err := p.Exec(ctx, `INSERT INTO v VALUES ($1, $2, $3, $4, $5, $6, $7)`, name(s), all, i, n, i > 0, 0.1, `{"k": 1}`); err != nil {
					t.Fatal(err)
				}
				var gs name
				var gb []byte
				var gi int64
				var gn int32
				var gok bool
				var gf float64
				var gj string
				err := p.QueryRow(ctx, `SELECT s, b, i, n, ok, f, j FROM v WHERE s = $1 AND i = $2 AND n = $3`, s, i, &n).
					Scan(&gs, &gb, &gi, &gn, &gok, &gf, &gj)
				if err != nil {
					t.Fatal(err)
				}
				if string(gs) != s || !bytes.Equal(gb, all) || gi != i || gn != n || gok != (i > 0) || gf != 0.1 || gj != `{"k": 1}` {
					t.Fatalf("got %q %x %d %d %v %v %s; want %q %x %d %d %v 0.1", gs, gb, gi, gn, gok, gf, gj, s, all, i, n, i > 0)
				}
			}
		}
	}
	// Arrays.
	var got []string
	rows, err := p.Query(ctx, `SELECT unnest($1::text[])`, texts)
	if err != nil {
		t.Fatal(err)
	}
	got, err = CollectRows(rows, RowTo[string])
	if err != nil || strings.Join(got, "|") != strings.Join(texts, "|") {
		t.Fatalf("text[] came back as %q, %v; want %q", got, err, texts)
	}
	blobs := [][]byte{all, {}, {0}, {'\\', '"'}}
	rows, err = p.Query(ctx, `SELECT unnest($1::bytea[])`, blobs)
	if err != nil {
		t.Fatal(err)
	}
	gotBlobs, err := CollectRows(rows, RowTo[[]byte])
	if err != nil || len(gotBlobs) != len(blobs) {
		t.Fatalf("bytea[] came back as %x, %v", gotBlobs, err)
	}
	for i := range blobs {
		if !bytes.Equal(gotBlobs[i], blobs[i]) {
			t.Fatalf("bytea[] element %d came back as %x; want %x", i, gotBlobs[i], blobs[i])
		}
	}
	var sum int64
	if err := p.QueryRow(ctx, `SELECT sum(x)::bigint FROM unnest($1::bigint[]) x`, []int64{math.MaxInt64, math.MinInt64, 3}).Scan(&sum); err != nil || sum != 2 {
		t.Fatalf("sum of bigint[] = %d, %v; want 2", sum, err)
	}
	// NULLs: nil, a nil pointer, slices; scanned into pointers and slices.
	var ps *string
	var pi *int64
	var pb []byte = []byte("x")
	err = p.QueryRow(ctx, `SELECT $1::text, $2::bigint, $3::bytea`, nil, (*int64)(nil), []byte(nil)).Scan(&ps, &pi, &pb)
	if err != nil || ps != nil || pi != nil || pb != nil {
		t.Fatalf("NULLs came back as %v %v %v, %v", ps, pi, pb, err)
	}
	v := "set"
	if err := p.QueryRow(ctx, `SELECT $1::text, 7::bigint`, &v).Scan(&ps, &pi); err != nil || ps == nil || *ps != "set" || pi == nil || *pi != 7 {
		t.Fatalf("pointers came back as %v %v, %v", ps, pi, err)
	}
	var s string
	if err := p.QueryRow(ctx, `SELECT NULL::text`).Scan(&s); err == nil {
		t.Fatal("NULL scanned into a string without an error")
	}
	if err := p.QueryRow(ctx, `SELECT 1 WHERE false`).Scan(&s); !errors.Is(err, ErrNoRows) || !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("no row: %v; want ErrNoRows (and sql.ErrNoRows)", err)
	}
}

// TestUnsupportedTypeIsAnError: an argument or a destination of a type
// pgq does not know is an error naming it, and the connection stays
// usable.
func TestUnsupportedTypeIsAnError(t *testing.T) {
	p := newPool(t, 1, time.Second)
	ctx := t.Context()
	type point struct{ X, Y int }
	_, err := p.Exec(ctx, `SELECT $1::text`, point{1, 2})
	if err == nil || !strings.Contains(err.Error(), "pgq.point") {
		t.Fatalf("a struct argument: %v; want an error naming pgq.point", err)
	}
	var dst point
	if err := p.QueryRow(ctx, `SELECT 1::bigint`).Scan(&dst); err == nil || !strings.Contains(err.Error(), "pgq.point") {
		t.Fatalf("a struct destination: %v; want an error naming pgq.point", err)
	}
	var n int
	if err := p.QueryRow(ctx, `SELECT 1`).Scan(&n, &n); err == nil {
		t.Fatal("two destinations for one column: no error")
	}
	if err := p.QueryRow(ctx, `SELECT 2`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("after the errors: %d, %v", n, err)
	}
}

// TestKilledConnectionIsReplaced: a connection the server ended is not
// used again: pinged before use it is replaced at once; used, it fails
// once and is dropped.
func TestKilledConnectionIsReplaced(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pingIdle time.Duration
		failures int // queries that may fail after the kill
	}{{"pinged", 0, 0}, {"not pinged", time.Hour, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPool(t, 1, tc.pingIdle)
			ctx := t.Context()
			var pid int
			if err := p.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				t.Fatal(err)
			}
			killer, err := Connect(ctx, p.Config())
			if err != nil {
				t.Fatal(err)
			}
			defer killer.Close(ctx)
			var killed bool
			// The timeout waits until the backend has ended.
			if err := killer.QueryRow(ctx, `SELECT pg_terminate_backend($1, 10000)`, pid).Scan(&killed); err != nil || !killed {
				t.Fatalf("pg_terminate_backend: %v, %v", killed, err)
			}
			var next int
			for try := 0; ; try++ {
				err := p.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&next)
				if err == nil {
					break
				}
				if try >= tc.failures {
					t.Fatalf("query %d after the kill: %v", try+1, err)
				}
			}
			if next == pid {
				t.Fatalf("the killed connection (pid %d) is still in use", pid)
			}
		})
	}
}

// TestPoolNeverHoldsMoreThanItsSize: many queries at once open at most
// MaxConns connections, and an Acquire past them waits for one.
func TestPoolNeverHoldsMoreThanItsSize(t *testing.T) {
	const size = 3
	p := newPool(t, size, time.Second)
	ctx := t.Context()
	var mu sync.Mutex
	most := 0
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			var n int
			err := p.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity, pg_sleep(0.01)
				WHERE datname = current_database() AND application_name = 'pgqtest'`).Scan(&n)
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			most = max(most, n)
			mu.Unlock()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if most > size || most == 0 {
		t.Fatalf("%d connections open at once; want 1 to %d", most, size)
	}
	var held []*PoolConn
	for range size {
		pc, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, pc)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire past the pool's size: %v; want it to wait until its context ends", err)
	}
	held[0].Release()
	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatalf("Acquire once one was given back: %v", err)
	}
	pc.Release()
	for _, pc := range held[1:] {
		pc.Release()
	}
}

// TestTransactionsAndBatches: BeginFunc commits or rolls back; a commit
// of a failed transaction is an error; a batch is one implicit
// transaction; a connection given back inside a transaction is dropped.
func TestTransactionsAndBatches(t *testing.T) {
	p := newPool(t, 1, time.Second)
	ctx := t.Context()
	if _, err := p.Exec(ctx, `CREATE TABLE k (id bigint PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		t.Helper()
		if err := p.QueryRow(ctx, `SELECT count(*) FROM k`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := BeginFunc(ctx, p, func(tx Tx) error { _, err := tx.Exec(ctx, `INSERT INTO k VALUES ($1)`, 1); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := BeginFunc(ctx, p, func(tx Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO k VALUES ($1)`, 2); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("BeginFunc: %v; want boom", err)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d rows after a commit and a rollback; want 1", n)
	}
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO k VALUES ($1)`, 1)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		t.Fatalf("duplicate key: %v; want a PgError 23505", err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, ErrTxCommitRollback) {
		t.Fatalf("commit of a failed transaction: %v; want ErrTxCommitRollback", err)
	}

	b := &Batch{}
	b.Queue(`INSERT INTO k VALUES ($1)`, 3)
	b.Queue(`SELECT id FROM k WHERE id >= $1 ORDER BY id`, 1)
	b.Queue(`INSERT INTO k VALUES ($1)`, 1) // fails: the batch's insert is undone
	br := p.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		t.Fatal(err)
	}
	rows, err := br.Query()
	if err != nil {
		t.Fatal(err)
	}
	ids, err := CollectRows(rows, RowTo[int64])
	if err != nil || len(ids) != 2 || ids[0] != 1 || ids[1] != 3 {
		t.Fatalf("ids in the batch %v, %v; want [1 3]", ids, err)
	}
	if _, err := br.Exec(); !errors.As(err, &pe) {
		t.Fatalf("the batch's duplicate: %v; want a PgError", err)
	}
	if err := br.Close(); !errors.As(err, &pe) {
		t.Fatalf("Close of the failed batch: %v; want its PgError", err)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d rows after a failed batch; want 1", n)
	}

	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := pc.Conn().QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Conn().Exec(ctx, `BEGIN`); err != nil {
		t.Fatal(err)
	}
	pc.Release()
	var next int
	if err := p.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&next); err != nil || next == pid {
		t.Fatalf("after a connection was given back inside a transaction: pid %d (was %d), %v; want another", next, pid, err)
	}
}

// TestNotifications: a connection that listens gets each notification's
// payload, in order.
func TestNotifications(t *testing.T) {
	p := newPool(t, 2, time.Second)
	ctx := t.Context()
	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := pc.Hijack()
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `LISTEN pgq_test`); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"one", "two"} {
		if _, err := p.Exec(ctx, `SELECT pg_notify('pgq_test', $1)`, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"one", "two"} {
		n, err := c.WaitForNotification(ctx)
		if err != nil || n.Payload != want {
			t.Fatalf("notification %v, %v; want %q", n, err, want)
		}
	}
}

// TestStatementCache: a connection keeps at most maxStatements prepared,
// and a statement whose result changed with the schema is prepared again.
func TestStatementCache(t *testing.T) {
	p := newPool(t, 1, time.Hour)
	ctx := t.Context()
	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Release()
	c := pc.Conn()
	for i := range maxStatements + 20 {
		var n int64
		if err := c.QueryRow(ctx, `SELECT $1::bigint + `+strings.Repeat("0+", i)+`0`, 1).Scan(&n); err != nil || n != 1 {
			t.Fatalf("statement %d: %d, %v", i, n, err)
		}
	}
	var prepared int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_prepared_statements`).Scan(&prepared); err != nil {
		t.Fatal(err)
	}
	if prepared > maxStatements || len(c.stmts) > maxStatements {
		t.Fatalf("%d statements prepared (%d cached); want at most %d", prepared, len(c.stmts), maxStatements)
	}
	if _, err := c.Exec(ctx, `CREATE TABLE s (a bigint); INSERT INTO s VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	const q = `SELECT * FROM s WHERE a = $1`
	if err := c.QueryRow(ctx, q, 1).Scan(new(int64)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `ALTER TABLE s ADD b bigint`); err != nil {
		t.Fatal(err)
	}
	_ = c.QueryRow(ctx, q, 1).Scan(new(int64), new(*int64)) // may fail once: the cached plan's result changed
	var a int64
	var b *int64
	if err := c.QueryRow(ctx, q, 1).Scan(&a, &b); err != nil || a != 1 || b != nil {
		t.Fatalf("after the schema changed: %d %v, %v", a, b, err)
	}
}

// TestParseConfig: pgxpool's and pgx's parameters are taken out of the
// server's, pool_max_conns sets the pool's size, and bad values are
// refused.
func TestParseConfig(t *testing.T) {
	c, err := ParseConfig("postgres://u@h:5433/d?pool_max_conns=7&pool_max_conn_lifetime=2m&statement_cache_capacity=10&search_path=x")
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxConns != 7 || c.MaxConnLifetime != 2*time.Minute || c.ConnConfig.Port != 5433 {
		t.Fatalf("config %+v", c)
	}
	if len(c.ConnConfig.RuntimeParams) != 1 || c.ConnConfig.RuntimeParams["search_path"] != "x" {
		t.Fatalf("runtime params %v; want only search_path", c.ConnConfig.RuntimeParams)
	}
	for _, dsn := range []string{"postgres://u@h/d?pool_max_conns=0", "postgres://u@h/d?pool_max_conns=x",
		"postgres://u@h/d?pool_max_conn_idle_time=1", "host=h default_query_exec_mode=fast"} {
		if _, err := ParseConfig(dsn); err == nil {
			t.Errorf("%s parsed", dsn)
		}
	}
}
