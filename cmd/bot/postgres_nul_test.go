package main

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// TestPostgresApprovedOutputWithNUL: on PostgreSQL, an approved shell call
// whose output holds a NUL byte (printf 'a\000b', as find -print0 or a
// binary file) is recorded as any other: its approval ends executed (not
// left executing for a later instance to announce interrupted), it is
// audited executed, and the turn of its outcome is stored with the output,
// its NUL shown as \x00 (no history write fails).
func TestPostgresApprovedOutputWithNUL(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", postgresConfig(t))
	env := baseEnv(dir, "GATEHOUSE_DSN="+dsn)

	b := startBot(t, dir, env)
	b.send(`run ` + "`" + `printf 'a\000b'` + "`")
	expectLine(t, b, "Approval needed: shell")
	token := expectToken(t, b)
	b.send("/approve " + token)
	ran := expectLine(t, b, "Approved by console:local")
	if !strings.Contains(ran, "ran") {
		t.Errorf("outcome notice %q does not say the call ran", ran)
	}
	b.closeInput()
	if code := b.wait(); code != 0 {
		t.Fatalf("exit %d after end of input; want 0", code)
	}
	for _, bad := range []string{"history append", "could not record the end of a run", "audit append failed", "invalid byte sequence"} {
		if strings.Contains(b.stderr.String(), bad) {
			t.Errorf("the bot logged %q:\n%s", bad, tail(b.stderr.String(), 4000))
		}
	}
	if got := auditOutcomes(t, dir, env); got["approved"] != 1 || got["executed"] != 1 || got["interrupted"] != 0 {
		t.Errorf("audit of the shell call: %v; want approved 1, executed 1, interrupted 0", got)
	}
	checkStoredRun(t, dsn, `a\x00b`)
}

// checkStoredRun reads the database dsn names: its one approval must have
// ended executed, and the history of its conversation must hold its
// outcome, output included.
func checkStoredRun(t *testing.T, dsn, output string) {
	t.Helper()
	ctx := context.Background()
	db, err := postgres.Open(ctx, dsn, postgres.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	list, err := db.Approvals(ctx)
	if err != nil || len(list) != 1 || list[0].Status != record.StatusExecuted {
		t.Fatalf("approvals = %+v, %v; want one, executed", list, err)
	}
	hist, err := db.Load(ctx, list[0].Conv.Key())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range hist {
		if m.Role == llm.RoleUser && strings.Contains(m.Content, output) {
			return
		}
	}
	t.Errorf("the history of %s holds no outcome with %q: %+v", list[0].Conv.Key(), output, hist)
}
