package postgres

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

// DSNError is the error of a DSN that does not parse. Its message says
// why without repeating the DSN, which may hold a password.
type DSNError struct{ Reason string }

func (e *DSNError) Error() string {
	return "not a PostgreSQL connection string: " + e.Reason
}

// ParseDSN parses dsn with pgx's own parser (pgconn.ParseConfig, through
// pgq.ParseConfig, which takes pgxpool's pool_* parameters out), without
// connecting.
func ParseDSN(dsn string) (*pgq.Config, error) {
	pc, err := pgq.ParseConfig(dsn)
	if err != nil {
		return nil, &DSNError{Reason: parseReason(err)}
	}
	return pc, nil
}

// parseReason is why pgx could not parse a DSN, without the DSN: pgx's
// own message quotes it (a URL's password redacted only at best), and a
// URL's parse error quotes it whole.
func parseReason(err error) string {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err.Error()
	}
	if pe, ok := errors.AsType[*pgconn.ParseConfigError](err); ok {
		if inner := errors.Unwrap(pe); inner != nil {
			if ne, ok := errors.AsType[*strconv.NumError](inner); ok {
				return fmt.Sprintf("%s: %v", ne.Func, ne.Err)
			}
		}
		// "cannot parse `<dsn>`: <why>": keep the why.
		s := pe.Error()
		if i := strings.LastIndex(s, "`: "); i >= 0 {
			return s[i+len("`: "):]
		}
	}
	return "it does not parse"
}

// Where names the database dsn connects to for people: host:port/database
// (a Unix socket's directory for its host), never the user or password.
func Where(dsn string) string {
	pc, err := ParseDSN(dsn)
	if err != nil {
		return "(a store.dsn that does not parse)"
	}
	return whereConfig(pc)
}

func whereConfig(pc *pgq.Config) string {
	c := pc.ConnConfig
	return net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))) + "/" + c.Database
}

// connectError is the one line for a server that could not be reached
// or refused the login: where, and pgx's reason without its prefix (which
// names the user and database again).
func connectError(where string, err error) error {
	reason := err.Error()
	if ce, ok := errors.AsType[*pgconn.ConnectError](err); ok && errors.Unwrap(ce) != nil {
		reason = errors.Unwrap(ce).Error()
	}
	reason = strings.Join(strings.Fields(reason), " ")
	return fmt.Errorf("postgres: cannot connect to %s: %s", where, reason)
}
