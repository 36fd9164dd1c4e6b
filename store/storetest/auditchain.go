package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/auditchain"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// ChainStore is what AuditChainContract needs of a driver.
type ChainStore interface {
	store.Audit
	store.AuditChain
}

// ChainFixture is a store for AuditChainContract and a way around its
// guard, as a database owner has: Exec runs SQL on the database directly,
// and Unguard is the statement that lets the audit table be updated and
// deleted from (dropping or disabling its append-only triggers).
type ChainFixture struct {
	Store   ChainStore
	Exec    func(query string) error
	Unguard string
}

// AuditChainContract tests the audit log's hash chain (store/auditchain):
// it verifies on a fresh database, empty or not, and on one upgraded from
// schema 14 with legacy rows already in it (they are the anchor; open is
// called with legacy > 0 for that and must append that many audit rows
// through the schema-14 table before opening), also after appends from
// many goroutines at once; and it breaks, naming the row, after an UPDATE
// of a row's outcome, a DELETE of a row (the row after the gap), a DELETE
// of the last row (the recorded head) and a DELETE among the legacy rows.
func AuditChainContract(t *testing.T, open func(t *testing.T, legacy int) ChainFixture) {
	t.Helper()
	t.Run("Empty", func(t *testing.T) {
		f := open(t, 0)
		wantChain(t, f.Store, 0, 0, nil)
	})
	t.Run("Fresh", func(t *testing.T) {
		f := open(t, 0)
		appendN(t, f.Store, 5)
		wantChain(t, f.Store, 5, 0, nil)
	})
	t.Run("Token", func(t *testing.T) {
		f := open(t, 0)
		appendN(t, f.Store, 3)
		got, err := f.Store.QueryAudit(context.Background(), record.AuditFilter{Token: "tok1"})
		if want := chainEntry(1); err != nil || len(got) != 1 || got[0].Token != want.Token || got[0].Args != want.Args {
			t.Fatalf("QueryAudit(Token: tok1) = %+v, %v; want the one entry of tok1", got, err)
		}
	})
	t.Run("OddText", func(t *testing.T) {
		// Text a driver must store otherwise (PostgreSQL: NUL, invalid
		// UTF-8) is hashed as stored.
		f := open(t, 0)
		e := chainEntry(0)
		e.Detail, e.Args = "find -print0\x00a\x00b\xff\xfe", "{\"command\":\"cat \xc3\x28\"}"
		if err := f.Store.AppendAudit(context.Background(), e); err != nil {
			t.Fatalf("AppendAudit: %v", err)
		}
		appendN(t, f.Store, 1)
		wantChain(t, f.Store, 2, 0, nil)
	})
	t.Run("Concurrent", func(t *testing.T) {
		f := open(t, 0)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 10 {
					e := chainEntry(g*10 + i)
					if err := f.Store.AppendAudit(context.Background(), e); err != nil {
						t.Errorf("AppendAudit: %v", err)
					}
				}
			})
		}
		wg.Wait()
		wantChain(t, f.Store, 80, 0, nil)
	})
	t.Run("Upgraded", func(t *testing.T) {
		f := open(t, 3)
		wantChain(t, f.Store, 0, 3, nil)
		appendN(t, f.Store, 4)
		wantChain(t, f.Store, 4, 3, nil)
		got, err := f.Store.QueryAudit(context.Background(), record.AuditFilter{})
		if err != nil || len(got) != 7 {
			t.Fatalf("QueryAudit after the upgrade = %d entries, %v; want 7", len(got), err)
		}
	})
	auditChainTampered(t, open)
}

// auditChainTampered is AuditChainContract's half that goes around the
// guard: each change must break the chain at the row it names.
func auditChainTampered(t *testing.T, open func(t *testing.T, legacy int) ChainFixture) {
	t.Run("UpdatedOutcome", func(t *testing.T) {
		f := open(t, 0)
		ids := appendN(t, f.Store, 5)
		tamper(t, f, fmt.Sprintf(`UPDATE audit SET outcome = 'denied' WHERE id = %d`, ids[2]))
		wantChain(t, f.Store, 2, 0, &ids[2])
	})
	t.Run("DeletedRow", func(t *testing.T) {
		f := open(t, 0)
		ids := appendN(t, f.Store, 5)
		tamper(t, f, fmt.Sprintf(`DELETE FROM audit WHERE id = %d`, ids[2]))
		wantChain(t, f.Store, 2, 0, &ids[3])
	})
	t.Run("DeletedFirstRow", func(t *testing.T) {
		f := open(t, 0)
		ids := appendN(t, f.Store, 3)
		tamper(t, f, fmt.Sprintf(`DELETE FROM audit WHERE id = %d`, ids[0]))
		wantChain(t, f.Store, 0, 0, &ids[1])
	})
	t.Run("DeletedLastRow", func(t *testing.T) {
		f := open(t, 0)
		ids := appendN(t, f.Store, 3)
		tamper(t, f, fmt.Sprintf(`DELETE FROM audit WHERE id = %d`, ids[2]))
		wantChain(t, f.Store, 2, 0, &ids[2])
		// An append after the gap links to the recorded head: the gap
		// shows at the new row.
		next := appendN(t, f.Store, 1)
		wantChain(t, f.Store, 2, 0, &next[0])
	})
	t.Run("DeletedLegacyRow", func(t *testing.T) {
		f := open(t, 3)
		ids := appendN(t, f.Store, 2)
		tamper(t, f, `DELETE FROM audit WHERE id = (SELECT MIN(id) FROM audit)`)
		wantChain(t, f.Store, 0, 2, &ids[0])
	})
}

// chainEntry is the i-th sample entry of the chain tests.
func chainEntry(i int) record.AuditEntry {
	return record.AuditEntry{
		At: auditBase.Add(time.Duration(i) * time.Second), Conv: "alpha:42", Tool: "shell",
		Args: fmt.Sprintf(`{"command":"echo %d"}`, i), RequestedBy: "alpha:7", ApprovedBy: "beta:U1",
		Outcome: "executed", Detail: fmt.Sprintf("exit 0\n%d üñí", i), Token: fmt.Sprintf("tok%d", i),
	}
}

// appendN appends n sample entries and returns their ids.
func appendN(t *testing.T, s ChainStore, n int) []int64 {
	t.Helper()
	ctx := context.Background()
	before := map[int64]bool{}
	walk(t, s, func(r record.AuditRow) { before[r.ID] = true })
	for i := range n {
		if err := s.AppendAudit(ctx, chainEntry(i)); err != nil {
			t.Fatalf("AppendAudit: %v", err)
		}
	}
	var ids []int64
	walk(t, s, func(r record.AuditRow) {
		if !before[r.ID] {
			ids = append(ids, r.ID)
		}
	})
	if len(ids) != n {
		t.Fatalf("rows appended = %v; want %d", ids, n)
	}
	return ids
}

func walk(t *testing.T, s ChainStore, fn func(record.AuditRow)) {
	t.Helper()
	err := s.WalkAudit(context.Background(), func(r record.AuditRow) error { fn(r); return nil })
	if err != nil {
		t.Fatalf("WalkAudit: %v", err)
	}
}

func tamper(t *testing.T, f ChainFixture, query string) {
	t.Helper()
	if err := f.Exec(query); err == nil {
		t.Fatalf("%s passed the append-only guard", query)
	}
	if err := f.Exec(f.Unguard); err != nil {
		t.Fatalf("%s: %v", f.Unguard, err)
	}
	if err := f.Exec(query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// wantChain verifies s's chain: checked rows chained and legacy before
// the anchor, broken at row *broken (nil: it holds).
func wantChain(t *testing.T, s ChainStore, checked, legacy int64, broken *int64) {
	t.Helper()
	res, err := auditchain.Verify(context.Background(), s)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if res.Checked != checked || res.Legacy != legacy {
		t.Errorf("Verify checked %d rows, %d before the anchor; want %d, %d (%+v)", res.Checked, res.Legacy, checked, legacy, res.Break)
	}
	switch {
	case broken == nil && res.Break != nil:
		t.Errorf("Verify: %v; want the chain to hold", res.Break)
	case broken != nil && res.Break == nil:
		t.Errorf("Verify: the chain holds; want it broken at row %d", *broken)
	case broken != nil && res.Break.ID != *broken:
		t.Errorf("Verify: %v; want it broken at row %d", res.Break, *broken)
	}
}
