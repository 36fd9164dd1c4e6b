package pgtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
)

// TestDSNIsAFreshDatabase: each DSN names a database of its own, empty.
func TestDSNIsAFreshDatabase(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.DSN(t), pgtest.DSN(t)
	var names []string
	for _, dsn := range []string{a, b} {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		var name string
		var tables int
		err = conn.QueryRow(ctx, `SELECT current_database(),
			(SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public')`).Scan(&name, &tables)
		conn.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, "gatehouse_test_") || tables != 0 {
			t.Errorf("database %q with %d tables; want a fresh gatehouse_test_… one", name, tables)
		}
		names = append(names, name)
	}
	if names[0] == names[1] {
		t.Errorf("two DSNs name one database, %s", names[0])
	}
}

func TestWithDatabase(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:p@h:5432/db?sslmode=disable": "postgres://u:p@h:5432/other?sslmode=disable",
		"host=h user=u dbname=db":                  "host=h user=u dbname=db dbname=other",
	} {
		if got := pgtest.WithDatabase(t, in, "other"); got != want {
			t.Errorf("WithDatabase(%q) = %q; want %q", in, got, want)
		}
	}
}
