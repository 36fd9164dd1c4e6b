package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/store/record"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// TestCheckpointsFromVersion3AreRealCheckpoints: a checkpoint stored by a
// gatehouse before migration 0004 comes back as a real checkpoint (no
// NoCheckpoint) with its manifest, and stays the latest once a marker is
// added after it.
func TestCheckpointsFromVersion3AreRealCheckpoints(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gatehouse.db")
	raw, err := sql.Open("sqlite", path)
	mustNoErr(t, err)
	for _, name := range []string{"0001_init.sql", "0002_standing_files.sql", "0003_checkpoints.sql"} {
		b, err := os.ReadFile(filepath.Join("migrations", name))
		mustNoErr(t, err)
		_, err = raw.Exec(string(b))
		mustNoErr(t, err)
	}
	// files: the gzip of "[]\n", an empty workspace's manifest.
	_, err = raw.Exec(`CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (3);
		INSERT INTO checkpoints (conv, conv_gateway, conv_chat, tool, args, requested_by, created, files)
		VALUES ('console:a', 'console', 'a', 'write_file', '{}', 'console:local', 1,
		X'1f8b080013bf066b02ff8b8ee5020044d2687003000000')`)
	mustNoErr(t, errors.Join(err, raw.Close()))

	db := openAt(t, path, sqlite.Options{})
	old, err := db.LatestCheckpoint(ctx)
	if err != nil || old.ID != 1 || old.NoCheckpoint != "" || old.Tool != "write_file" {
		t.Fatalf("old checkpoint after migration = %+v, %v", old, err)
	}
	if _, err := db.AddCheckpoint(ctx, record.Checkpoint{Conv: old.Conv, Tool: "shell", Args: "{}", RequestedBy: "console:local",
		NoCheckpoint: "over max_file"}); err != nil {
		t.Fatal(err)
	}
	if latest, err := db.LatestCheckpoint(ctx); err != nil || latest.ID != 1 {
		t.Fatalf("latest after a marker = #%d, %v; want #1", latest.ID, err)
	}
	list, err := db.Checkpoints(ctx, record.CheckpointFilter{})
	if err != nil || len(list) != 2 || !strings.Contains(list[0].NoCheckpoint, "max_file") {
		t.Fatalf("listing %+v, %v", list, err)
	}
}
