package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// TestStandingAllowFromVersion1BindsNothing: a standing allow stored by a
// gatehouse before migration 0002 comes back with nil Files (it predates
// file binding, so the broker holds its call again), and it can be rebound.
func TestStandingAllowFromVersion1BindsNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gatehouse.db")
	v1, err := os.ReadFile(filepath.Join("migrations", "0001_init.sql"))
	mustNoErr(t, err)
	raw, err := sql.Open("sqlite", path)
	mustNoErr(t, err)
	_, err = raw.Exec(string(v1))
	mustNoErr(t, err)
	_, err = raw.Exec(`CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (1);
		INSERT INTO standing_allows (tool, args, added_by, added, conv) VALUES ('shell', '{"command":"sh run.sh"}', 'telegram:1', 1, 'telegram:1')`)
	mustNoErr(t, errors.Join(err, raw.Close()))

	db := openAt(t, path, sqlite.Options{})
	s, err := db.StandingAllowFor(ctx, "shell", `{"command":"sh run.sh"}`)
	if err != nil || s.ID != 1 || s.Files != nil {
		t.Fatalf("old allow after migration = %+v, %v; want #1 with nil Files", s, err)
	}
	s.Files = map[string]string{"run.sh": "absent"}
	again, err := db.AddStandingAllow(ctx, s)
	if err != nil || again.ID != 1 || again.Files["run.sh"] != "absent" {
		t.Fatalf("rebinding = %+v, %v", again, err)
	}
}
