package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatehouse-bot/gatehouse/core"
)

// unreachable returns err, of a statement run with ctx, marked with
// core.ErrUnavailable when it says the server cannot be reached now (lost):
// the caller refuses the message it was taking, and nothing is lost. An
// error of a ctx that ended is the caller's, and is returned as it is.
func unreachable(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil || errors.Is(err, core.ErrUnavailable) || !lost(err) {
		return err
	}
	return fmt.Errorf("%w: %w", core.ErrUnavailable, err)
}

// lost reports whether err says the server is out of reach for now: no
// connection could be made, the connection broke, or the server is
// shutting down, starting up, or out of connections. A statement the
// server refused (a constraint, a syntax error) is not lost.
func lost(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08: connection exception; 57P01..57P03: admin or crash
		// shutdown, cannot connect now; 53300: too many connections.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" ||
			pe.Code == "57P03" || pe.Code == "53300"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || pgconn.SafeToRetry(err) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
