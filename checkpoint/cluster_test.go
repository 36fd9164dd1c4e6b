package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
)

// pgLeases are a postgres store's leases as Leases (app's
// adapter does the same over store.Leases).
type pgLeases struct{ *postgres.DB }

func (l *pgLeases) LeaseHoldersOf(ctx context.Context, prefix string) ([]string, error) {
	all, err := l.LeaseHolders(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, h := range all {
		if strings.HasPrefix(h.Name, prefix) {
			out = append(out, h.Holder)
		}
	}
	return out, nil
}

// clusterManager is instance name's Manager on dsn over ws, holding the
// workspace through the database's leases.
func clusterManager(t *testing.T, dsn, ws, name string) (*Manager, *postgres.DB) {
	t.Helper()
	var leases pgLeases
	m, db := sharedManager(t, dsn, ws, func(o *Options) {
		o.Leases, o.Instance, o.LeaseTTL = &leases, name, 3*time.Second
	})
	leases.DB = db
	return m, db
}

// An /undo on instance B while a changing tool call runs on instance A
// (one workspace, one database) is refused, naming A, and changes
// nothing; once the call has ended it restores. A changing call on A
// waits while an /undo on B holds the workspace.
func TestUndoRefusedWhileAnotherInstanceChanges(t *testing.T) {
	dsn := pgtest.DSN(t)
	ws := t.TempDir()
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, dbA := clusterManager(t, dsn, ws, "a")
	b, _ := clusterManager(t, dsn, ws, "b")

	write("first\n")
	note, release := a.Checkpoint(context.Background(), core.Action{Kind: core.ActionTool, Conv: convA, From: "console:local",
		Call: llm.ToolCall{ID: "c1", Name: "write_file", Args: `{"path":"notes.txt"}`}})
	if note != "" {
		t.Fatalf("checkpoint on A: %q", note)
	}
	write("changed by the call still running on A\n")
	reply, _ := undo(b, convA, "console:local", true, 1)
	if !strings.Contains(reply, "running on instance a") {
		t.Fatalf("/undo on B while A's changing call runs: %q; want it refused, naming a", reply)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(got) != "changed by the call still running on A\n" {
		t.Fatalf("the refused /undo changed the workspace: %q", got)
	}
	release()
	reply, _ = undo(b, convA, "console:local", true, 1)
	if !strings.Contains(reply, "Restored") {
		t.Fatalf("/undo on B once A's call ended: %q", reply)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(got) != "first\n" {
		t.Fatalf("after /undo on B: %q", got)
	}

	// B's /undo in progress (its lease held): A's next changing call waits.
	ctx := context.Background()
	if held, err := dbA.AcquireLease(ctx, undoLease, "b", time.Minute); err != nil || !held {
		t.Fatalf("take the undo lease as b: %v, %v", held, err)
	}
	started := make(chan func())
	go func() {
		_, release := a.Checkpoint(ctx, core.Action{Kind: core.ActionTool, Conv: convA, From: "console:local",
			Call: llm.ToolCall{ID: "c2", Name: "write_file", Args: `{"path":"notes.txt"}`}})
		started <- release
	}()
	testutil.WaitFor(t, "A's run lease held", func() bool {
		h, err := (&pgLeases{dbA}).LeaseHoldersOf(ctx, runLease)
		return err == nil && len(h) == 1 && h[0] == "a"
	})
	select {
	case release := <-started:
		release()
		t.Fatal("A's changing call started while B's /undo held the workspace")
	default:
	}
	if err := dbA.ReleaseLease(ctx, undoLease, "b"); err != nil {
		t.Fatal(err)
	}
	(<-started)()
	testutil.WaitFor(t, "A's run lease released", func() bool {
		h, err := (&pgLeases{dbA}).LeaseHoldersOf(ctx, runLease)
		return err == nil && len(h) == 0
	})
}
