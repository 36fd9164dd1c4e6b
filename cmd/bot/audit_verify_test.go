package main

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditVerify: `bot audit verify` on the database of a real run (a
// held command approved and run: requested, approved, executed) exits 0
// with the rows checked; after an UPDATE of one row's outcome (its
// triggers dropped, as the file's owner can) it exits 1 naming that row,
// after a DELETE of a row the row after the gap; a file that is no
// database exits 2.
func TestAuditVerify(t *testing.T) {
	t.Parallel()
	const trigger = "please append a run"
	dir, _ := newFakeBotDir(t, trigger, "echo run >> runs.txt")
	env := baseEnv(dir)
	p := startBot(t, dir, env)
	p.send(trigger)
	token := expectToken(t, p)
	p.send("/approve " + token)
	expectLine(t, p, "MODEL: the command ran.")
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("bot exit %d; want 0", code)
	}

	r := runOnce(t, dir, env, "", "audit", "verify")
	if r.code != exitOK || !strings.Contains(r.stdout, "audit chain holds: 3 rows checked") {
		t.Fatalf("verify of an untouched log: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	raw, err := sql.Open("sqlite", filepath.Join(dir, "gatehouse.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := raw.Exec(`UPDATE audit SET outcome = 'denied' WHERE id = 2`); err == nil {
		t.Fatal("UPDATE of an audit row passed the append-only trigger")
	}
	exec(`DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete`)
	exec(`UPDATE audit SET outcome = 'denied' WHERE id = 2`)
	wantBroken(t, dir, env, 2)
	exec(`UPDATE audit SET outcome = 'approved' WHERE id = 2`) // as it was
	if r := runOnce(t, dir, env, "", "audit", "verify"); r.code != exitOK {
		t.Fatalf("verify after undoing the edit: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	exec(`DELETE FROM audit WHERE id = 2`)
	wantBroken(t, dir, env, 3)

	writeFile(t, dir, "gatehouse.db", "not a database\n")
	r = runOnce(t, dir, env, "", "audit", "verify")
	if r.code != exitUnverified || r.stdout != "" || !strings.Contains(r.stderr, "cannot open") {
		t.Fatalf("verify of a file that is no database: exit %d; want %d and the reason on stderr\nstdout:\n%s\nstderr:\n%s",
			r.code, exitUnverified, r.stdout, r.stderr)
	}
}

// wantBroken runs `bot audit verify` in dir and wants exit 1 naming row id.
func wantBroken(t *testing.T, dir string, env []string, id int) {
	t.Helper()
	r := runOnce(t, dir, env, "", "audit", "verify")
	if want := fmt.Sprintf("audit chain BROKEN at row %d:", id); r.code != exitChainBroken || !strings.Contains(r.stdout, want) {
		t.Fatalf("verify: exit %d; want %d and %q\nstdout:\n%s\nstderr:\n%s", r.code, exitChainBroken, want, r.stdout, r.stderr)
	}
}
