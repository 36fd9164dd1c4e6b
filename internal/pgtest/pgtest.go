// Package pgtest gives tests a fresh PostgreSQL database of their own on
// the server GATEHOUSE_TEST_POSTGRES_DSN names (bash .ci/postgres.sh starts
// a throwaway one and sets it). Without the variable the tests that need
// PostgreSQL skip, saying so in one line.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env is the variable that holds the DSN of a server tests may create
// databases on (as a superuser, or a role with CREATEDB).
const Env = "GATEHOUSE_TEST_POSTGRES_DSN"

// Server returns the DSN of the test server, or skips t when Env is unset.
func Server(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(Env)
	if dsn == "" {
		t.Skip("set " + Env + " to run the PostgreSQL tests (bash .ci/postgres.sh go test ./... does)")
	}
	return dsn
}

// DSN creates a fresh, empty database on the test server, drops it when
// the test ends (after the test's own cleanups registered later, such as
// closing a store on it), and returns its DSN. It skips t when Env is
// unset.
func DSN(t testing.TB) string {
	t.Helper()
	server := Server(t)
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := "gatehouse_test_" + hex.EncodeToString(b[:])
	admin(t, server, "CREATE DATABASE "+name)
	t.Cleanup(func() { admin(t, server, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	return WithDatabase(t, server, name)
}

// WithDatabase returns dsn (a URL or key=value DSN) with its database
// replaced by name.
func WithDatabase(t testing.TB, dsn, name string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("%s: %v", Env, err)
		}
		u.Path = "/" + name
		return u.String()
	}
	return dsn + " dbname=" + name // the last of a repeated key wins
}

// admin runs one statement on the server's own database.
func admin(t testing.TB, dsn, stmt string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("pgtest: connect to the server %s names: %v", Env, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, stmt); err != nil {
		t.Fatalf("pgtest: %s: %v", stmt, err)
	}
}
