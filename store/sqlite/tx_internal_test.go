package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestDurability: durable transactions run with synchronous=FULL (2), and
// the writer returns to NORMAL (1) afterwards; relaxed ones stay NORMAL.
func TestDurability(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "d.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	level := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) int {
		var n int
		if err := q.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tt := range []struct {
		dur  bool
		want int
	}{{durable, 2}, {relaxed, 1}} {
		var inside int
		err := db.inTx(ctx, "test", tt.dur, func(tx *sql.Tx) error {
			inside = level(tx)
			return nil
		})
		if err != nil || inside != tt.want {
			t.Errorf("durable=%v: synchronous inside = %d, %v; want %d", tt.dur, inside, err, tt.want)
		}
		if after := level(db.w); after != 1 {
			t.Errorf("durable=%v: synchronous after = %d; want 1 (NORMAL)", tt.dur, after)
		}
	}
	var mode string
	if err := db.r.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}
