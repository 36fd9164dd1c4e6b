package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// dbStats are a database's counter in pg_stat_database.
type dbStats struct {
	at    time.Time
	xacts int64 // xact_commit: transactions committed, read-only ones included
}

// readDBStats reads db's counters through admin, a connection to another
// database of the server, so that reading them adds nothing to them.
func readDBStats(ctx context.Context, admin *pgx.Conn, db string) (dbStats, error) {
	s := dbStats{at: time.Now()}
	err := admin.QueryRow(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = $1`, db).Scan(&s.xacts)
	if err != nil {
		return s, fmt.Errorf("read pg_stat_database: %w", err)
	}
	return s, nil
}

// readTableStats reads the rows written so far to each table of the
// database conn is connected to.
func readTableStats(ctx context.Context, conn *pgx.Conn) (map[string]int64, error) {
	rows, err := conn.Query(ctx, `SELECT relname, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables`)
	if err != nil {
		return nil, fmt.Errorf("read pg_stat_user_tables: %w", err)
	}
	out := map[string]int64{}
	var name string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&name, &n}, func() error {
		out[name] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read pg_stat_user_tables: %w", err)
	}
	return out, nil
}

// sum is the total of rows.
func sum(rows map[string]int64) int64 {
	var n int64
	for _, v := range rows {
		n += v
	}
	return n
}

// tableDelta is the rows written to each table from t0 to t1, the
// tables written to only.
func tableDelta(t0, t1 map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for name, n := range t1 {
		if d := n - t0[name]; d > 0 {
			out[name] = d
		}
	}
	return out
}

// byTableLine lists the tables of rows, most written first, each with
// its rows divided by per.
func byTableLine(rows map[string]int64, per float64) string {
	names := slices.Sorted(maps.Keys(rows))
	slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(rows[b], rows[a]) })
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %.2f", name, float64(rows[name])/per)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
