package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// TestOldRunnerDatabasesAreUpgradedByGoose: a database the migration
// runner before goose left at any version (its migrations applied, its
// version in schema_version, no goose table) is taken over by goose and
// upgraded to exactly the schema of a database goose created, its rows
// kept, with both version tables at this build's version.
func TestOldRunnerDatabasesAreUpgradedByGoose(t *testing.T) {
	ctx := context.Background()
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	openAt(t, fresh, sqlite.Options{})
	want := schemaOf(t, fresh)
	names, err := filepath.Glob(filepath.Join("migrations", "*.sql"))
	mustNoErr(t, err)
	for v := 1; v <= sqlite.SchemaVersion(); v++ {
		t.Run(fmt.Sprintf("version%d", v), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gatehouse.db")
			raw, err := sql.Open("sqlite", path)
			mustNoErr(t, err)
			for _, name := range names[:v] {
				b, err := os.ReadFile(name)
				mustNoErr(t, err)
				_, err = raw.Exec(string(b))
				mustNoErr(t, err)
			}
			_, err = raw.Exec(`CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (?);
				INSERT INTO cursors (key, value, updated) VALUES ('telegram', '41', 1)`, v)
			mustNoErr(t, errors.Join(err, raw.Close()))

			db := openAt(t, path, sqlite.Options{})
			if c, err := db.Cursor(ctx, "telegram"); err != nil || c != "41" {
				t.Errorf("cursor after the upgrade = %q, %v; want 41", c, err)
			}
			mustNoErr(t, db.Close())
			if got := schemaOf(t, path); got != want {
				t.Errorf("schema after the upgrade from version %d:\n%s\nwant (a new database's):\n%s", v, got, want)
			}
			if g, s := versions(t, path); g != sqlite.SchemaVersion() || s != g {
				t.Errorf("versions after the upgrade: goose %d, schema_version %d; want %d", g, s, sqlite.SchemaVersion())
			}
		})
	}
}

// TestNewerGooseVersionRefused: a database whose goose table records a
// migration newer than this build's is refused though schema_version
// (which an older gatehouse could have left behind) says less.
func TestNewerGooseVersionRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gatehouse.db")
	mustNoErr(t, openAt(t, path, sqlite.Options{}).Close())
	raw, err := sql.Open("sqlite", path)
	mustNoErr(t, err)
	_, err = raw.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (99, 1)`)
	mustNoErr(t, errors.Join(err, raw.Close()))
	_, err = sqlite.Open(context.Background(), path, sqlite.Options{})
	if !errors.Is(err, sqlite.ErrSchemaTooNew) || !strings.Contains(err.Error(), "version 99") {
		t.Fatalf("Open = %v; want ErrSchemaTooNew naming version 99", err)
	}
}

// schemaOf is the database's schema but goose's table, one line a table,
// index or trigger.
func schemaOf(t *testing.T, path string) string {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	mustNoErr(t, err)
	defer raw.Close()
	rows, err := raw.Query(`SELECT type, name, COALESCE(sql, '') FROM sqlite_master
		WHERE name NOT LIKE 'goose%' AND name NOT LIKE 'sqlite_%' ORDER BY type, name`)
	mustNoErr(t, err)
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var typ, name, text string
		mustNoErr(t, rows.Scan(&typ, &name, &text))
		fmt.Fprintf(&b, "%s %s: %s\n", typ, name, strings.Join(strings.Fields(text), " "))
	}
	mustNoErr(t, rows.Err())
	return b.String()
}

// versions reads the newest version in goose's table and schema_version.
func versions(t *testing.T, path string) (gooseVersion, schemaVersion int) {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	mustNoErr(t, err)
	defer raw.Close()
	mustNoErr(t, raw.QueryRow(`SELECT MAX(version_id) FROM goose_db_version WHERE is_applied`).Scan(&gooseVersion))
	mustNoErr(t, raw.QueryRow(`SELECT version FROM schema_version`).Scan(&schemaVersion))
	return gooseVersion, schemaVersion
}
