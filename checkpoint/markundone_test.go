package checkpoint

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// failMarkIndex fails MarkUndone, as a storage error after the restore.
type failMarkIndex struct{ *sqlite.DB }

func (failMarkIndex) MarkUndone(context.Context, int64, core.Identity, time.Time) (int64, error) {
	return 0, errors.New("disk I/O error")
}

// When the restore succeeds and marking its checkpoints undone fails, the
// reply says the files were restored but the undo was not recorded, and
// the audit row says failed.
func TestUndoMarkFailureIsReported(t *testing.T) {
	f := newFixture(t, nil)
	f.m = f.open(func(o *Options) { o.Index = failMarkIndex{f.db} })
	f.write("a.txt", "v1")
	f.call(convA, "write_file", "")
	f.write("a.txt", "v2")
	reply, note := undo(f.m, convA, "console:local", true, 1)
	if !strings.Contains(reply, "Restored the workspace to before write_file") ||
		!strings.Contains(reply, "the undo could not be recorded") || !strings.Contains(reply, "restore to before write_file") {
		t.Fatalf("reply %q", reply)
	}
	if !strings.Contains(note, "workspace restored") {
		t.Errorf("note %q: the files did change, the model must know", note)
	}
	if got := tree(t, f.ws)["a.txt"]; got != "v1" {
		t.Fatalf("a.txt = %q", got)
	}
	audit, err := f.db.QueryAudit(context.Background(), record.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 1 || audit[0].Outcome != "failed" || !strings.Contains(audit[0].Detail, "could not be recorded") {
		t.Fatalf("audit %+v", audit)
	}
}
