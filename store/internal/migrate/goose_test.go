package migrate_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/gatehouse-bot/gatehouse/store/internal/migrate"
)

// sqliteMigrations is the SQLite driver's migrations directory.
var sqliteMigrations = os.DirFS(filepath.Join("..", "..", "sqlite", "migrations"))

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// gooseUp migrates db with goose itself, which ran gatehouse's migrations
// until issue 34, up to version (0: all).
func gooseUp(t *testing.T, db *sql.DB, fsys fs.FS, version int64) {
	t.Helper()
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys,
		goose.WithDisableGlobalRegistry(true), goose.WithLogger(goose.NopLogger()))
	if err != nil {
		t.Fatal(err)
	}
	if version == 0 {
		_, err = p.Up(context.Background())
	} else {
		_, err = p.UpTo(context.Background(), version)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// state is a database's schema and its version table's rows (but their
// times).
func state(t *testing.T, db *sql.DB) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT type || ' ' || name || ': ' || COALESCE(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`,
		`SELECT id || ' ' || version_id || ' ' || is_applied || ' ' || (tstamp IS NOT NULL) FROM goose_db_version ORDER BY id`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			b.WriteString(s + "\n")
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestUpMakesWhatGooseMade: every migration of the SQLite driver, run by
// Up, leaves exactly the schema and version table goose left; a database
// goose migrated part of the way is taken on by Up (and one Up migrated
// part of the way by goose) to the same end.
func TestUpMakesWhatGooseMade(t *testing.T) {
	ctx := context.Background()
	byGoose := openDB(t)
	gooseUp(t, byGoose, sqliteMigrations, 0)
	want := state(t, byGoose)

	byUp := openDB(t)
	latest, err := migrate.Latest(sqliteMigrations)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := migrate.Up(ctx, migrate.SQLite, byUp, sqliteMigrations, nil); err != nil || v != latest {
		t.Fatalf("Up = %d, %v; want %d", v, err, latest)
	}
	if got := state(t, byUp); got != want {
		t.Fatalf("after Up:\n%s\nwant (goose's):\n%s", got, want)
	}
	if v, err := migrate.Up(ctx, migrate.SQLite, byUp, sqliteMigrations, nil); err != nil || v != latest || state(t, byUp) != want {
		t.Fatalf("Up again = %d, %v, changed %v; want %d and nothing changed", v, err, state(t, byUp) != want, latest)
	}
	for _, half := range []int{1, latest / 2, latest - 1} {
		t.Run(fmt.Sprintf("goose to %d", half), func(t *testing.T) {
			db := openDB(t)
			gooseUp(t, db, sqliteMigrations, int64(half))
			if v, err := migrate.Up(ctx, migrate.SQLite, db, sqliteMigrations, nil); err != nil || v != latest {
				t.Fatalf("Up = %d, %v; want %d", v, err, latest)
			}
			if got := state(t, db); got != want {
				t.Errorf("after goose to %d then Up:\n%s\nwant:\n%s", half, got, want)
			}
		})
	}
	t.Run("Up then goose", func(t *testing.T) {
		db := openDB(t)
		names, err := fs.Glob(sqliteMigrations, "*.sql")
		if err != nil {
			t.Fatal(err)
		}
		part := fstest.MapFS{}
		for _, n := range names[:latest/2] {
			b, err := fs.ReadFile(sqliteMigrations, n)
			if err != nil {
				t.Fatal(err)
			}
			part[n] = &fstest.MapFile{Data: b}
		}
		if _, err := migrate.Up(ctx, migrate.SQLite, db, part, nil); err != nil {
			t.Fatal(err)
		}
		gooseUp(t, db, sqliteMigrations, 0)
		if got := state(t, db); got != want {
			t.Errorf("after Up to %d then goose:\n%s\nwant:\n%s", latest/2, got, want)
		}
	})
}

// TestUpRefusesAGap: a version missing below the newest applied one is an
// error, as it was with goose, and nothing is run.
func TestUpRefusesAGap(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	fsys := fstest.MapFS{
		"0001_a.sql": {Data: []byte("-- +goose Up\nCREATE TABLE a (x INTEGER);\n")},
		"0002_b.sql": {Data: []byte("-- +goose Up\nCREATE TABLE b (x INTEGER);\n")},
		"0003_c.sql": {Data: []byte("-- +goose Up\nCREATE TABLE c (x INTEGER);\n")},
	}
	if _, err := migrate.Up(ctx, migrate.SQLite, db, fstest.MapFS{"0001_a.sql": fsys["0001_a.sql"]}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (3, 1)`); err != nil {
		t.Fatal(err)
	}
	_, err := migrate.Up(ctx, migrate.SQLite, db, fsys, nil)
	if err == nil || !strings.Contains(err.Error(), "0002_b.sql is not applied") {
		t.Fatalf("Up over a gap = %v; want 0002_b.sql named", err)
	}
}
