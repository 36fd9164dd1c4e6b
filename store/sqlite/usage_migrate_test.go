package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// TestUsageFromVersion4CostsNothing: usage recorded by a gatehouse before
// migration 0005 keeps its tokens and costs 0 (its provider is unknown, so
// it is not priced after the fact); usage added after the migration adds
// its cost to the same day's row.
func TestUsageFromVersion4CostsNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gatehouse.db")
	raw, err := sql.Open("sqlite", path)
	mustNoErr(t, err)
	for _, name := range []string{"0001_init.sql", "0002_standing_files.sql", "0003_checkpoints.sql", "0004_checkpoint_markers.sql"} {
		b, err := os.ReadFile(filepath.Join("migrations", name))
		mustNoErr(t, err)
		_, err = raw.Exec(string(b))
		mustNoErr(t, err)
	}
	_, err = raw.Exec(`CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (4);
		INSERT INTO usage (conv, day, prompt_tokens, completion_tokens) VALUES ('telegram:1', '2026-03-01', 100, 20)`)
	mustNoErr(t, errors.Join(err, raw.Close()))

	day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	db := openAt(t, path, sqlite.Options{Now: func() time.Time { return day }})
	old, err := db.Usage(ctx, "telegram:1", day)
	if want := (llm.Usage{PromptTokens: 100, CompletionTokens: 20}); err != nil || old != want {
		t.Fatalf("usage from version 4 = %+v, %v; want %+v", old, err, want)
	}
	mustNoErr(t, db.AddUsage(ctx, "telegram:1", llm.Usage{PromptTokens: 1, CompletionTokens: 1, CostUSD: 0.5}))
	got, err := db.DayUsage(ctx, day)
	if want := (llm.Usage{PromptTokens: 101, CompletionTokens: 21, CostUSD: 0.5}); err != nil || got != want {
		t.Errorf("day usage after an added cost = %+v, %v; want %+v", got, err, want)
	}
}
