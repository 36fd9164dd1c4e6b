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

// BenchmarkQueryRowPgq and BenchmarkQueryRowPgx run cmpQ through a pool of
// pgq and one of pgx, for the client's CPU per query (cpu-ns/op: the
// process's, round trips included).
func BenchmarkQueryRowPgq(b *testing.B) {
	dsn := pgtest.DSN(b)
	cfg, err := ParseConfig(dsn)
	if err != nil {
		b.Fatal(err)
	}
	p := NewPool(cfg)
	defer p.Close()
	ctx := context.Background()
	blob := make([]byte, 64)
	c0 := cpu()
	b.ReportAllocs()
	for b.Loop() {
		var s string
		var n int64
		var bb []byte
		var ok bool
		if err := p.QueryRow(ctx, cmpQ, "hello", int64(5), blob).Scan(&s, &n, &bb, &ok); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu()-c0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkQueryRowPgx(b *testing.B) {
	dsn := pgtest.DSN(b)
	p, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	blob := make([]byte, 64)
	c0 := cpu()
	b.ReportAllocs()
	for b.Loop() {
		var s string
		var n int64
		var bb []byte
		var ok bool
		if err := p.QueryRow(ctx, cmpQ, "hello", int64(5), blob).Scan(&s, &n, &bb, &ok); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu()-c0)/float64(b.N), "cpu-ns/op")
}
