package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
)

// tableFixture is the PostgreSQL database whose checkpoint_blobs table a
// fixture under TestTableBlobs keeps its blobs in.
type tableFixture struct {
	db  *postgres.DB
	raw *pgx.Conn // to damage and drop blobs behind the store's back
}

// newTableFixture opens a fresh database when t runs under TestTableBlobs,
// and returns nil otherwise (the blob directory).
func newTableFixture(t testing.TB) *tableFixture {
	t.Helper()
	if !strings.HasPrefix(t.Name(), "TestTableBlobs/") {
		return nil
	}
	dsn := pgtest.DSN(t)
	db, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	raw, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close(context.Background()) })
	return &tableFixture{db: db, raw: raw}
}

// blobBytes is the bytes the blob store holds, counted where they are.
func (f *fixture) blobBytes() int64 {
	f.t.Helper()
	if f.tables == nil {
		return dirBytes(f.t.(*testing.T), filepath.Join(f.dir, "g.db.blobs"))
	}
	var n int64
	if err := f.tables.raw.QueryRow(context.Background(), `SELECT COALESCE(SUM(length(content)), 0) FROM checkpoint_blobs`).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

// dropBlobs loses every blob (the directory deleted, the rows deleted).
func (f *fixture) dropBlobs() {
	f.t.Helper()
	var err error
	if f.tables == nil {
		err = os.RemoveAll(filepath.Join(f.dir, "g.db.blobs"))
	} else {
		_, err = f.tables.raw.Exec(context.Background(), `DELETE FROM checkpoint_blobs`)
	}
	if err != nil {
		f.t.Fatal(err)
	}
}

// damageBlob replaces the content of the blob sum with damage's.
func (f *fixture) damageBlob(sum string, damage func([]byte) []byte) {
	f.t.Helper()
	if f.tables == nil {
		blob := f.m.blobPath(sum)
		b, err := os.ReadFile(blob)
		if err != nil {
			f.t.Fatal(err)
		}
		if err := os.WriteFile(blob, damage(b), 0o600); err != nil {
			f.t.Fatal(err)
		}
		return
	}
	ctx := context.Background()
	var b []byte
	if err := f.tables.raw.QueryRow(ctx, `SELECT content FROM checkpoint_blobs WHERE hash = $1`, sum).Scan(&b); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.tables.raw.Exec(ctx, `UPDATE checkpoint_blobs SET content = $2 WHERE hash = $1`, sum, damage(b)); err != nil {
		f.t.Fatal(err)
	}
}

// TestTableBlobs runs the checkpoint tests that do not look into the blob
// directory itself with the blobs in a PostgreSQL database's
// checkpoint_blobs table (NewTableBlobs) and the Manager shared
// (Options.Shared), as app wires it on a shared store.
func TestTableBlobs(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	for name, test := range map[string]func(*testing.T){
		"TestUndoRestoresExactBytesAndRemovesCreatedFiles":           TestUndoRestoresExactBytesAndRemovesCreatedFiles,
		"TestUndoTwoGoesBackTwoCalls":                                TestUndoTwoGoesBackTwoCalls,
		"TestUndoOfApprovedCallNeedsAnApprover":                      TestUndoOfApprovedCallNeedsAnApprover,
		"TestUndoAcrossConversationsNeedsAnApprover":                 TestUndoAcrossConversationsNeedsAnApprover,
		"TestOverMaxFileNoCheckpoint":                                TestOverMaxFileNoCheckpoint,
		"TestMaxTotalPrunesOldestFirst":                              TestMaxTotalPrunesOldestFirst,
		"TestKeepPerConversation":                                    TestKeepPerConversation,
		"TestCrashBetweenBlobsAndIndex":                              TestCrashBetweenBlobsAndIndex,
		"TestSymlinksNeverFollowedOut":                               TestSymlinksNeverFollowedOut,
		"TestMissingBlobsRefuseBeforeChanging":                       TestMissingBlobsRefuseBeforeChanging,
		"TestPreflightEscapesNames":                                  TestPreflightEscapesNames,
		"TestRepliesShowNewlinesInNames":                             TestRepliesShowNewlinesInNames,
		"TestWorkspaceThroughSymlink":                                TestWorkspaceThroughSymlink,
		"TestRestoreHashesRacyFiles":                                 TestRestoreHashesRacyFiles,
		"TestGrowingFileNeverPassesMaxTotal":                         TestGrowingFileNeverPassesMaxTotal,
		"TestUndoRemovesCreatedSpecialFiles":                         TestUndoRemovesCreatedSpecialFiles,
		"TestSimultaneousUndoOnce":                                   TestSimultaneousUndoOnce,
		"TestUndoKeepsNamesThatAreNotUTF8":                           TestUndoKeepsNamesThatAreNotUTF8,
		"TestDamagedBlobRefusesBeforeChanging":                       TestDamagedBlobRefusesBeforeChanging,
		"TestUndoRestoresModificationTimeOfSameContent":              TestUndoRestoresModificationTimeOfSameContent,
		"TestUndoNeverChangesAFileOutsideThroughAHardLink":           TestUndoNeverChangesAFileOutsideThroughAHardLink,
		"TestUndoAcrossApprovedCallWithoutCheckpointNeedsAnApprover": TestUndoAcrossApprovedCallWithoutCheckpointNeedsAnApprover,
		"TestUndoAcrossOtherConversationsCallWithoutCheckpoint":      TestUndoAcrossOtherConversationsCallWithoutCheckpoint,
		"TestUndoOfOnlyCallWithoutCheckpoint":                        TestUndoOfOnlyCallWithoutCheckpoint,
		"TestMarkerSurvivesRestart":                                  TestMarkerSurvivesRestart,
		"TestCheckpointAfterMarkerCopiesOnlyChangedFiles":            TestCheckpointAfterMarkerCopiesOnlyChangedFiles,
		"TestKeepCountsCheckpointsNotMarkers":                        TestKeepCountsCheckpointsNotMarkers,
		"TestUndoMarkFailureIsReported":                              TestUndoMarkFailureIsReported,
		"TestTemporaryFilesAreNotRecorded":                           TestTemporaryFilesAreNotRecorded,
	} {
		t.Run(name, test)
	}
}

// blobCount is how many blobs the blob store holds.
func (f *fixture) blobCount() int {
	f.t.Helper()
	if f.tables == nil {
		return countFiles(f.t.(*testing.T), filepath.Join(f.dir, "g.db.blobs"))
	}
	var n int
	if err := f.tables.raw.QueryRow(context.Background(), `SELECT count(*) FROM checkpoint_blobs`).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}
