package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// BenchmarkAppendAudit is the cost of the audit chain per row: a chained
// append (AppendAudit: lock the head, insert, move the head, in one
// transaction) beside the lone INSERT an append was before, one writer and
// several at once (parallel: appends take turns on the head's lock).
func BenchmarkAppendAudit(b *testing.B) {
	ctx := context.Background()
	dsn := pgtest.DSN(b)
	db := openAt(b, dsn, postgres.Options{})
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	e := record.AuditEntry{Conv: "alpha:42", Tool: "shell", Args: `{"command":"ls"}`,
		RequestedBy: "alpha:7", ApprovedBy: "beta:U1", Outcome: "executed", Detail: "exit 0", Token: "K7Q2MX9P"}
	chained := func() error { return db.AppendAudit(ctx, e) }
	plain := func() error {
		_, err := pool.Exec(ctx, `INSERT INTO audit (at, conv, tool, args, requested_by, approved_by, outcome, detail)
			VALUES (1, $1, $2, $3, $4, $5, $6, $7)`, e.Conv, e.Tool, e.Args, string(e.RequestedBy), string(e.ApprovedBy), e.Outcome, e.Detail)
		return err
	}
	for _, bb := range []struct {
		name string
		fn   func() error
	}{{"plain", plain}, {"chained", chained}} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				if err := bb.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bb.name+"-parallel", func(b *testing.B) {
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := bb.fn(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
