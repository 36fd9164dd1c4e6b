package main

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
)

// TestAuditVerifyPostgres: `bot audit verify` on PostgreSQL: a run's rows
// (a piped question whose tool call is audited, three runs) hold; after
// the database's owner disables the append-only triggers, an UPDATE of
// row 2's outcome names row 2 and a DELETE of row 2 names row 3 (exit 1);
// a wrong password exits 2, without the password.
func TestAuditVerifyPostgres(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", postgresConfig(t))
	env := baseEnv(dir, "GATEHOUSE_DSN="+dsn)
	for range 3 {
		if r := runOnce(t, dir, env, "what time is it\n"); r.code != exitOK {
			t.Fatalf("bot on postgres: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	}
	r := runOnce(t, dir, env, "", "audit", "verify")
	if r.code != exitOK || !strings.Contains(r.stdout, "audit chain holds: 3 rows checked") {
		t.Fatalf("verify: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(q string) error { _, err := conn.Exec(ctx, q); return err }
	if err := exec(`UPDATE audit SET outcome = 'failed' WHERE id = 2`); err == nil {
		t.Fatal("UPDATE of an audit row passed the append-only trigger")
	}
	for _, q := range []string{`ALTER TABLE audit DISABLE TRIGGER USER`, `UPDATE audit SET outcome = 'failed' WHERE id = 2`} {
		if err := exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	wantBroken(t, dir, env, 2)
	if err := exec(`DELETE FROM audit WHERE id = 2`); err != nil {
		t.Fatal(err)
	}
	wantBroken(t, dir, env, 3)

	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "wrong-Pa55word")
	r = runOnce(t, dir, baseEnv(dir, "GATEHOUSE_DSN="+u.String()), "", "audit", "verify")
	if r.code != exitUnverified || strings.Contains(r.stdout+r.stderr, "wrong-Pa55word") {
		t.Errorf("verify with a wrong password: exit %d; want %d, no password\nstdout:\n%s\nstderr:\n%s", r.code, exitUnverified, r.stdout, r.stderr)
	}
}
