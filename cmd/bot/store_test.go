package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/store/record"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// storeState is what a refused instance must leave alone: one approval's
// status and the number of audit entries.
func storeState(t *testing.T, dbPath, token string) (record.Status, int) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, dbPath, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open %s read-only: %v", dbPath, err)
	}
	defer db.Close()
	a, err := db.Approval(ctx, token)
	if err != nil {
		t.Fatalf("approval %s: %v", token, err)
	}
	entries, err := db.QueryAudit(ctx, record.AuditFilter{})
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	return a.Status, len(entries)
}

// TestSecondInstanceRefused: a second `bot run` on the database of a
// running bot exits 1 with one line naming the database and saying another
// instance holds it, and touches nothing: the first bot's approved command,
// still running, stays "executing" (a second instance's restart recovery
// would have marked it interrupted). `bot audit` and `bot doctor` work
// beside the running bot.
func TestSecondInstanceRefused(t *testing.T) {
	t.Parallel()
	const trigger = "please start the slow job"
	dir, ws := newFakeBotDir(t, trigger, "echo start >> runs.txt; echo $$ > sh.pid; sleep 30")
	env := baseEnv(dir)
	t.Cleanup(func() { killShellGroup(t, filepath.Join(ws, "sh.pid")) })
	dbPath := filepath.Join(dir, "gatehouse.db")

	p := startBot(t, dir, env)
	p.send(trigger)
	token := expectToken(t, p)
	expectLine(t, p, "MODEL: the command awaits approval.")
	p.send("/approve " + token)
	waitFile(t, filepath.Join(ws, "runs.txt"), func(s string) bool { return s == "start\n" })
	status, audited := storeState(t, dbPath, token)
	if status != record.StatusExecuting {
		t.Fatalf("approval %s is %s; want executing while its command runs", token, status)
	}

	r := runOnce(t, dir, env, "hello\n", "run")
	if r.code != exitFail {
		t.Fatalf("second instance: exit %d; want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitFail, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], dbPath) || !strings.Contains(lines[0], "another gatehouse instance holds it") {
		t.Errorf("second instance stderr = %q; want one line naming %s and saying another instance holds it", r.stderr, dbPath)
	}
	if r.stdout != "" {
		t.Errorf("second instance printed on stdout:\n%s", r.stdout)
	}
	if s, n := storeState(t, dbPath, token); s != record.StatusExecuting || n != audited {
		t.Errorf("after the refused instance: approval %s, %d audit entries; want executing, %d", s, n, audited)
	}

	if r := runOnce(t, dir, env, "", "audit", "-since", "1h"); r.code != exitOK || !strings.Contains(r.stdout, "approved") {
		t.Errorf("bot audit beside the running bot: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r := runOnce(t, dir, env, "", "doctor"); r.code != exitOK || !strings.Contains(r.stdout, "sqlite "+dbPath) {
		t.Errorf("bot doctor beside the running bot: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if s, _ := storeState(t, dbPath, token); s != record.StatusExecuting {
		t.Errorf("after audit and doctor the approval is %s; want executing", s)
	}
	select {
	case <-p.done:
		t.Fatalf("the first bot stopped: %v", p.state)
	default:
	}
}

// TestDoctorOlderSchema: a database from an older gatehouse is one the
// bot upgrades when it starts, so `bot doctor` says so and exits 0 (it
// reported "PROBLEM: … older than this gatehouse" and "the bot cannot run
// as configured"); it leaves the database at its old version.
func TestDoctorOlderSchema(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t))
	dbPath := filepath.Join(dir, "gatehouse.db")
	ctx := context.Background()
	db, err := sqlite.Open(ctx, dbPath, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	old := sqlite.SchemaVersion() - 1
	setSchemaVersion(t, dbPath, old)
	r := runOnce(t, dir, baseEnv(dir), "", "doctor")
	want := fmt.Sprintf("sqlite %s (an older schema: the bot upgrades it to version %d when it starts)", dbPath, sqlite.SchemaVersion())
	if r.code != exitOK || !strings.Contains(r.stdout, want) {
		t.Fatalf("bot doctor: exit %d; want 0 and %q\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
	if v := schemaVersion(t, dbPath); v != old {
		t.Errorf("after doctor the schema version is %d; want %d", v, old)
	}
}

// setSchemaVersion sets the schema version a database claims.
func setSchemaVersion(t *testing.T, dbPath string, v int) {
	t.Helper()
	raw, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.Exec(`UPDATE schema_version SET version = ?`, v)
	if err := errors.Join(err, raw.Close()); err != nil {
		t.Fatal(err)
	}
}

// schemaVersion reads the schema version a database claims.
func schemaVersion(t *testing.T, dbPath string) int {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var v int
	err = raw.QueryRow(`SELECT version FROM schema_version`).Scan(&v)
	if err := errors.Join(err, raw.Close()); err != nil {
		t.Fatal(err)
	}
	return v
}
