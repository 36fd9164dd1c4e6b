package postgres_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// exec runs statements on the database dsn names, past the store.
func exec(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestInstancesStartingTogetherMigrateOnce: stores opened at once on a
// new database (past the instance lock, as several instances will) all
// start, and goose's table records each version once
// (the advisory lock let one instance migrate; the others found it done).
func TestInstancesStartingTogetherMigrateOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			db, err := postgres.Open(context.Background(), dsn, postgres.Options{})
			if err == nil {
				err = db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Opens: %v", err)
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var rows, distinct, top int
	err = conn.QueryRow(context.Background(), `SELECT count(*), count(DISTINCT version_id), max(version_id)
		FROM goose_db_version WHERE version_id > 0`).Scan(&rows, &distinct, &top)
	if err != nil {
		t.Fatal(err)
	}
	if v := postgres.SchemaVersion(); rows != v || distinct != v || top != v {
		t.Errorf("goose_db_version: %d rows, %d versions, newest %d; want each of 1..%d once", rows, distinct, top, v)
	}
}

// TestNewerSchemaRefused: a database a newer gatehouse migrated is refused,
// naming both versions, by the bot and by `bot audit`'s read-only open.
func TestNewerSchemaRefused(t *testing.T) {
	dsn := pgtest.DSN(t)
	db, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	exec(t, dsn, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (99, true)`)
	want := "database schema version 99 is newer than this gatehouse"
	for _, ro := range []bool{false, true} {
		_, err := postgres.Open(context.Background(), dsn, postgres.Options{ReadOnly: ro})
		if !errors.Is(err, store.ErrSchemaTooNew) || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(ReadOnly: %v) = %v; want ErrSchemaTooNew saying %q", ro, err, want)
		}
	}
}

// TestReadOnly: a database gatehouse never used is ErrNotCreated and stays
// empty; one an older gatehouse left is ErrSchemaOld; on a current one
// reads work and writes fail.
func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if _, err := postgres.Open(ctx, dsn, postgres.Options{ReadOnly: true}); !errors.Is(err, store.ErrNotCreated) {
		t.Fatalf("read-only Open of an empty database = %v; want ErrNotCreated", err)
	}
	db := openAt(t, dsn, postgres.Options{})
	if err := db.AppendAudit(ctx, record.AuditEntry{Conv: "c:1", Tool: "t", Outcome: "executed"}); err != nil {
		t.Fatal(err)
	}
	ro := openAt(t, dsn, postgres.Options{ReadOnly: true})
	if got, err := ro.QueryAudit(ctx, record.AuditFilter{}); err != nil || len(got) != 1 {
		t.Fatalf("read-only QueryAudit = %v, %v", got, err)
	}
	if err := ro.SetCursor(ctx, "k", "v"); err == nil {
		t.Error("read-only SetCursor succeeded")
	}
	exec(t, dsn, `DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)`)
	if _, err := postgres.Open(ctx, dsn, postgres.Options{ReadOnly: true}); !errors.Is(err, store.ErrSchemaOld) {
		t.Errorf("read-only Open of an older schema = %v; want ErrSchemaOld", err)
	}
}

// TestClaimOnceAcrossStores: 100 claims of one approval at once, through
// two stores on the database (as two instances will), succeed once.
func TestClaimOnceAcrossStores(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	a := openAt(t, dsn, postgres.Options{})
	b, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	now := time.Now()
	err = a.CreateApproval(ctx, record.Approval{Token: "CLAIMONE", Conv: core.Conversation{Gateway: "console", Chat: "c"},
		RequestedBy: "console:local", Call: llm.ToolCall{Name: "shell", Args: "{}"}, Digest: "d",
		Created: now, Expires: now.Add(time.Hour), Status: record.StatusPending})
	if err != nil {
		t.Fatal(err)
	}
	var wins, lost atomic.Int32
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			st := a
			if i%2 == 1 {
				st = b
			}
			_, err := st.ClaimApproval(ctx, "CLAIMONE", record.StatusExecuting, "console:local", "", time.Now())
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, record.ErrNotPending):
				lost.Add(1)
			default:
				t.Errorf("claim: %v", err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 || lost.Load() != 99 {
		t.Errorf("%d claims won, %d lost; want 1 and 99", wins.Load(), lost.Load())
	}
}

// TestOpenFaultsNeverShowThePassword: a DSN that does not parse, a port
// nobody listens on and a wrong password each give one line naming what
// is wrong (the host and port where there is one), never the password.
func TestOpenFaultsNeverShowThePassword(t *testing.T) {
	server := pgtest.Server(t)
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "s3cret-Pa55word"
	wrong := *u
	wrong.User = url.UserPassword(u.User.Username(), secret)
	closed := wrong
	closed.Host = net.JoinHostPort("127.0.0.1", freePort(t))
	for _, tt := range []struct {
		name, dsn string
		want      []string
		dsnError  bool
	}{
		{"port not a number", "postgres://gatehouse:" + secret + "@127.0.0.1:notaport/db", []string{"invalid port"}, true},
		{"key=value port not a number", "host=127.0.0.1 port=notaport password=" + secret, []string{"invalid port"}, true},
		{"nobody listens", closed.String(), []string{closed.Host, "connection refused"}, false},
		{"wrong password", wrong.String(), []string{u.Host, "password authentication failed"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := postgres.Open(context.Background(), tt.dsn, postgres.Options{})
			if err == nil {
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
				t.Errorf("error %q shows the password or is not one line", msg)
			}
			t.Log(msg)
			if _, ok := errors.AsType[*postgres.DSNError](err); ok != tt.dsnError {
				t.Errorf("error %q: a *DSNError = %v; want %v", msg, ok, tt.dsnError)
			}
		})
	}
}

// freePort is a loopback port nothing listens on (it was free a moment ago).
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// TestSecondInstanceOpens: while one bot's store is open, a second
// writable Open of the same database works (several instances share it),
// and the store says it is shared.
func TestSecondInstanceOpens(t *testing.T) {
	dsn := pgtest.DSN(t)
	first := openAt(t, dsn, postgres.Options{})
	second := openAt(t, dsn, postgres.Options{})
	var _ store.Sharer = first
	if !first.Shared() || !second.Shared() {
		t.Fatal("Shared() = false; want true")
	}
	openAt(t, dsn, postgres.Options{ReadOnly: true})
}
