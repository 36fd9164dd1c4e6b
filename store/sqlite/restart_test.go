package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store/record"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

// TestReopenKeepsState: what was stored before a restart is there after it,
// and a pending approval keeps its expiry and can still be approved.
func TestReopenKeepsState(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gatehouse.db")
	clock := storetest.NewClock(t0)
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: "delete the build dir"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "shell", Args: `{"command":"rm -rf ./build"}`}}},
	}
	first, err := sqlite.Open(ctx, path, sqlite.Options{Now: clock.Now})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	mustCreate(t, first, pending("KEEP"))
	mustNoErr(t, first.Append(ctx, "slack:C1", msgs...))
	mustNoErr(t, first.SetCursor(ctx, "telegram.offset", "4711"))
	mustNoErr(t, first.AddUsage(ctx, "slack:C1", llm.Usage{PromptTokens: 9}))
	files := map[string]string{"run.sh": "sha256:00ff", "ls": "absent"}
	_, err = first.AddStandingAllow(ctx, record.StandingAllow{Tool: "shell", Args: `{"command":"ls"}`, AddedBy: "telegram:42", Files: files})
	mustNoErr(t, err)
	mustNoErr(t, first.Close())

	clock.Set(t0.Add(10 * time.Minute))
	db := openAt(t, path, sqlite.Options{Now: clock.Now})
	got, err := db.Approval(ctx, "KEEP")
	mustNoErr(t, err)
	assertApproval(t, got, pending("KEEP"))
	hist, err := db.Load(ctx, "slack:C1")
	mustNoErr(t, err)
	if len(hist) != 2 || hist[1].ToolCalls[0].Args != msgs[1].ToolCalls[0].Args {
		t.Fatalf("history after reopen = %+v; want %+v", hist, msgs)
	}
	if v, err := db.Cursor(ctx, "telegram.offset"); err != nil || v != "4711" {
		t.Fatalf("cursor after reopen = %q, %v; want 4711", v, err)
	}
	if u, err := db.Usage(ctx, "slack:C1", t0); err != nil || u.PromptTokens != 9 {
		t.Fatalf("usage after reopen = %+v, %v", u, err)
	}
	if s, err := db.StandingAllowFor(ctx, "shell", `{"command":"ls"}`); err != nil || !maps.Equal(s.Files, files) {
		t.Fatalf("standing allow after reopen = %+v, %v; want files %v", s, err, files)
	}
	if _, err := db.ClaimApproval(ctx, "KEEP", record.StatusExecuting, "telegram:42", "", clock.Now()); err != nil {
		t.Fatalf("claim after reopen: %v", err)
	}
}

// TestExecutingSurvivesReopen: an approval left executing by a dead
// process is still executing after a restart, so the broker's recovery
// finds it; finishing it as interrupted through FinishApproval works once,
// keeps who approved it, and it can never be claimed again. Other
// approvals are untouched.
func TestExecutingSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gatehouse.db")
	first, err := sqlite.Open(ctx, path, sqlite.Options{})
	mustNoErr(t, err)
	mustCreate(t, first, pending("RUN"))
	mustCreate(t, first, pending("WAIT"))
	_, err = first.ClaimApproval(ctx, "RUN", record.StatusExecuting, "telegram:42", "", t0.Add(time.Minute))
	mustNoErr(t, err)
	mustNoErr(t, first.Close()) // the process "dies" with RUN executing

	db := openAt(t, path, sqlite.Options{})
	found, err := db.Approvals(ctx, record.StatusExecuting)
	mustNoErr(t, err)
	if len(found) != 1 || found[0].Token != "RUN" || found[0].ResolvedBy != "telegram:42" ||
		found[0].Conv.Key() != "slack:C1:1712.5" {
		t.Fatalf("executing after reopen = %+v; want RUN, approved by telegram:42", found)
	}
	const note = "the bot stopped while this action was running; not run again"
	mustNoErr(t, db.FinishApproval(ctx, "RUN", record.StatusInterrupted, note, t0.Add(2*time.Minute)))
	if err := db.FinishApproval(ctx, "RUN", record.StatusInterrupted, note, t0.Add(2*time.Minute)); !errors.Is(err, record.ErrNotPending) {
		t.Fatalf("second finish as interrupted: error = %v; want ErrNotPending", err)
	}
	a, err := db.Approval(ctx, "RUN")
	if err != nil || a.Status != record.StatusInterrupted || a.Note != note || a.ResolvedBy != "telegram:42" {
		t.Fatalf("RUN after recovery = %+v, %v", a, err)
	}
	if a, err := db.Approval(ctx, "WAIT"); err != nil || a.Status != record.StatusPending {
		t.Fatalf("WAIT after recovery = %+v, %v; want pending", a, err)
	}
	if _, err := db.ClaimApproval(ctx, "RUN", record.StatusExecuting, "telegram:42", "", t0.Add(3*time.Minute)); !errors.Is(err, record.ErrNotPending) {
		t.Fatalf("claim of interrupted approval error = %v; want ErrNotPending", err)
	}
}

// TestNewerSchemaRefused: a database from a newer gatehouse is refused with
// a clear message and left byte for byte untouched.
func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gatehouse.db")
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	mustNoErr(t, err)
	mustNoErr(t, db.Close())
	raw, err := sql.Open("sqlite", path)
	mustNoErr(t, err)
	_, err = raw.Exec(`UPDATE schema_version SET version = 99`)
	mustNoErr(t, errors.Join(err, raw.Close()))
	before, err := os.ReadFile(path)
	mustNoErr(t, err)

	_, err = sqlite.Open(ctx, path, sqlite.Options{})
	if !errors.Is(err, sqlite.ErrSchemaTooNew) {
		t.Fatalf("Open error = %v; want ErrSchemaTooNew", err)
	}
	want := "database schema version 99 is newer than this gatehouse (" +
		strconv.Itoa(sqlite.SchemaVersion()) + "); upgrade gatehouse"
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("Open error = %q; want it to say %q", err, want)
	}
	after, err := os.ReadFile(path)
	mustNoErr(t, err)
	if !bytes.Equal(before, after) {
		t.Fatal("the refused database file was modified")
	}
}

// TestFileMode: the database and its WAL are created 0600, and a file that
// was readable by others is tightened.
func TestFileMode(t *testing.T) {
	dir := t.TempDir()
	loose := filepath.Join(dir, "loose.db")
	mustNoErr(t, os.WriteFile(loose, nil, 0o644))
	mustNoErr(t, os.Chmod(loose, 0o644)) // whatever the umask
	for _, path := range []string{filepath.Join(dir, "new.db"), loose} {
		db := openAt(t, path, sqlite.Options{})
		mustNoErr(t, db.SetCursor(context.Background(), "k", "v")) // makes the WAL exist
		for _, p := range []string{path, path + "-wal"} {
			fi, err := os.Stat(p)
			mustNoErr(t, err)
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s mode = %v; want 0600", filepath.Base(p), fi.Mode().Perm())
			}
		}
	}
}

func TestOpenRefusesMemoryAndGarbage(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "garbage.db")
	mustNoErr(t, os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 100)), 0o600))
	for _, dsn := range []string{":memory:", "file::memory:", "file:x.db?mode=memory", "", garbage} {
		if db, err := sqlite.Open(context.Background(), dsn, sqlite.Options{}); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded; want an error", dsn)
		}
	}
}

func TestFileURIDSN(t *testing.T) {
	path := filepath.Join(t.TempDir(), "uri.db")
	db := openAt(t, "file:"+path+"?_pragma=cache_size(-2000)", sqlite.Options{})
	mustNoErr(t, db.SetCursor(context.Background(), "k", "v"))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not at %s: %v", path, err)
	}
}

// TestPrune: history older than the retention goes, newer stays, at Open
// and on Prune; the audit log is kept.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gatehouse.db")
	clock := storetest.NewClock(t0)
	o := sqlite.Options{Retention: 48 * time.Hour, Now: clock.Now}
	db, err := sqlite.Open(ctx, path, o)
	mustNoErr(t, err)
	mustNoErr(t, db.Append(ctx, "c:1", llm.Message{Role: llm.RoleUser, Content: "old"}))
	mustNoErr(t, db.AppendAudit(ctx, record.AuditEntry{At: t0, Conv: "c:1", Tool: "shell", Outcome: "executed"}))
	clock.Set(t0.Add(24 * time.Hour))
	mustNoErr(t, db.Append(ctx, "c:1", llm.Message{Role: llm.RoleUser, Content: "new"}))
	mustNoErr(t, db.Close())

	clock.Set(t0.Add(49 * time.Hour)) // "old" is past retention, "new" is not
	db = openAt(t, path, o)
	assertContents(t, db, "c:1", "new")
	if n, err := db.Prune(ctx); err != nil || n != 0 {
		t.Fatalf("Prune after Open's prune = %d, %v; want 0", n, err)
	}
	clock.Set(t0.Add(73 * time.Hour))
	if n, err := db.Prune(ctx); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1", n, err)
	}
	assertContents(t, db, "c:1")
	if got, err := db.QueryAudit(ctx, record.AuditFilter{}); err != nil || len(got) != 1 {
		t.Fatalf("audit after prune = %v, %v; want the entry kept", got, err)
	}
}

// TestPruneZeroRetentionKeepsEverything: retention 0 means never prune,
// at Open and on Prune, however old the history is.
func TestPruneZeroRetentionKeepsEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gatehouse.db")
	clock := storetest.NewClock(t0)
	o := sqlite.Options{Retention: 0, Now: clock.Now}
	db, err := sqlite.Open(ctx, path, o)
	mustNoErr(t, err)
	mustNoErr(t, db.Append(ctx, "c:1", llm.Message{Role: llm.RoleUser, Content: "old"}))
	mustNoErr(t, db.Close())

	clock.Set(t0.Add(10 * 365 * 24 * time.Hour)) // far past any default retention
	db = openAt(t, path, o)
	assertContents(t, db, "c:1", "old")
	if n, err := db.Prune(ctx); err != nil || n != 0 {
		t.Fatalf("Prune with retention 0 = %d, %v; want 0, nil", n, err)
	}
	assertContents(t, db, "c:1", "old")
}

// TestLoadIsBoundedButKeepsOlderRows: Load returns the newest History
// messages; the older ones are still stored (for the audit) until pruned.
func TestLoadIsBoundedButKeepsOlderRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gatehouse.db")
	db := openAt(t, path, sqlite.Options{History: 2})
	for _, c := range []string{"1", "2", "3", "4"} {
		mustNoErr(t, db.Append(ctx, "c:1", llm.Message{Role: llm.RoleUser, Content: c}))
	}
	assertContents(t, db, "c:1", "3", "4")
	raw, err := sql.Open("sqlite", path)
	mustNoErr(t, err)
	defer raw.Close()
	var n int
	mustNoErr(t, raw.QueryRow(`SELECT COUNT(*) FROM messages WHERE conv = 'c:1'`).Scan(&n))
	if n != 4 {
		t.Fatalf("stored messages = %d; want all 4 kept", n)
	}
}

func TestAuditIsAppendOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gatehouse.db")
	db := openAt(t, path, sqlite.Options{})
	mustNoErr(t, db.AppendAudit(context.Background(), record.AuditEntry{Conv: "c:1", Tool: "t", Outcome: "executed"}))
	got, err := db.QueryAudit(context.Background(), record.AuditFilter{})
	if err != nil || len(got) != 1 || got[0].At.IsZero() {
		t.Fatalf("QueryAudit = %+v, %v; want one entry stamped with the time", got, err)
	}
	raw, err := sql.Open("sqlite", path)
	mustNoErr(t, err)
	defer raw.Close()
	for _, stmt := range []string{`UPDATE audit SET outcome = 'denied'`, `DELETE FROM audit`} {
		if _, err := raw.Exec(stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: error = %v; want append-only refusal", stmt, err)
		}
	}
}

func assertContents(t *testing.T, db *sqlite.DB, conv string, want ...string) {
	t.Helper()
	msgs, err := db.Load(context.Background(), conv)
	mustNoErr(t, err)
	var got []string
	for _, m := range msgs {
		got = append(got, m.Content)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Load(%s) = %q; want %q", conv, got, want)
	}
}

func mustNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
