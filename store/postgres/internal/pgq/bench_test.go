package pgq

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
)

// cpu is the CPU time this process has used.
func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cmpQ is a statement of the shape the store runs most: text, an integer
// and bytes in, a row out.
const cmpQ = `SELECT $1::text || 'x', $2::bigint + 1, $3::bytea, true`

// scanner is a row of either client.
type scanner interface{ Scan(dest ...any) error }

// BenchmarkQueryRowPgq and BenchmarkQueryRowPgx run cmpQ through a pool of
// pgq and one of pgx, for the client's CPU per query (cpu-ns/op: the
// process's, round trips included).
func BenchmarkQueryRowPgq(b *testing.B) {
	cfg, err := ParseConfig(pgtest.DSN(b))
	if err != nil {
		b.Fatal(err)
	}
	p := NewPool(cfg)
	defer p.Close()
	benchQueryRow(b, func(ctx context.Context, args ...any) scanner { return p.QueryRow(ctx, cmpQ, args...) })
}

func BenchmarkQueryRowPgx(b *testing.B) {
	p, err := pgxpool.New(context.Background(), pgtest.DSN(b))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	benchQueryRow(b, func(ctx context.Context, args ...any) scanner { return p.QueryRow(ctx, cmpQ, args...) })
}

// benchQueryRow runs cmpQ through queryRow b.N times.
func benchQueryRow(b *testing.B, queryRow func(ctx context.Context, args ...any) scanner) {
	ctx := context.Background()
	blob := make([]byte, 64)
	c0 := cpu()
	b.ReportAllocs()
	for b.Loop() {
		var s string
		var n int64
		var bb []byte
		var ok bool
		if err := queryRow(ctx, "hello", int64(5), blob).Scan(&s, &n, &bb, &ok); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu()-c0)/float64(b.N), "cpu-ns/op")
}
