package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

// TestUnreachableIsUnavailable: the writes and reads of the receive path
// (history, cursors, parked updates) on a server nobody listens for fail with an error
// matching core.ErrUnavailable; errors that are not about reaching the
// server, and those of a context that ended, do not match.
func TestUnreachableIsUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg, err := pgq.ParseConfig("postgres://bot@" + addr + "/gatehouse?sslmode=disable&connect_timeout=5")
	if err != nil {
		t.Fatal(err)
	}
	pool := pgq.NewPool(cfg)
	t.Cleanup(pool.Close)
	db := &DB{pool: textPool{pool}, opts: Options{}.withDefaults()}
	ctx := t.Context()
	msg := llm.Message{Role: llm.RoleUser, Content: "hi"}
	_, cursorErr := db.Cursor(ctx, "telegram:1:offset")
	_, loadErr := db.Load(ctx, "telegram:1")
	_, parkedErr := db.Parked(ctx, "bot:1", 10)
	for name, err := range map[string]error{
		"Append":    db.Append(ctx, "telegram:1", msg),
		"Load":      loadErr,
		"Cursor":    cursorErr,
		"SetCursor": db.SetCursor(ctx, "telegram:1:offset", "5"),
		"Park":      db.Park(ctx, "bot:1", map[int64][]byte{5: []byte("{}"), 6: []byte("{}")}),
		"Unpark":    db.Unpark(ctx, "bot:1", 5),
		"Parked":    parkedErr,
	} {
		if !errors.Is(err, core.ErrUnavailable) {
			t.Errorf("%s on a server nobody listens for: %v; want core.ErrUnavailable", name, err)
		}
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := db.SetCursor(cancelled, "k", "v"); errors.Is(err, core.ErrUnavailable) {
		t.Errorf("SetCursor with a cancelled context: %v; want the context's error, not unavailable", err)
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "57P01"}, true},  // admin shutdown
		{&pgconn.PgError{Code: "57P03"}, true},  // cannot connect now (starting up)
		{&pgconn.PgError{Code: "08006"}, true},  // connection failure
		{&pgconn.PgError{Code: "23505"}, false}, // unique violation
		{&pgconn.PgError{Code: "42601"}, false}, // syntax error
		{errors.New("postgres: something else"), false},
		{fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: "57P02"}), true},
	} {
		if got := errors.Is(unreachable(ctx, tc.err), core.ErrUnavailable); got != tc.want {
			t.Errorf("unreachable(%v) matches core.ErrUnavailable: %v; want %v", tc.err, got, tc.want)
		}
	}
}
