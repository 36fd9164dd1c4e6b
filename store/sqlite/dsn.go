package sqlite

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// Per-connection settings, applied by the driver to every new connection.
var (
	writerParams = []string{
		"_pragma=busy_timeout(" + strconv.Itoa(busyTimeoutMS) + ")",
		"_pragma=foreign_keys(1)",
		"_pragma=synchronous(NORMAL)", // durable writes switch to FULL (tx.go)
		"_txlock=immediate",
	}
	readerParams = []string{
		"_pragma=busy_timeout(" + strconv.Itoa(busyTimeoutMS) + ")",
		"_pragma=foreign_keys(1)",
		"_pragma=query_only(1)",
	}
)

// Path returns the database file a DSN names (a plain path, or a "file:"
// URI with or without a query); an in-memory DSN is an error.
func Path(dsn string) (string, error) { return filePath(dsn) }

// filePath returns the file path of dsn, a plain path or a "file:" URI,
// either with an optional query. In-memory databases are refused: the writer
// and the readers would each see a different one.
func filePath(dsn string) (path string, err error) {
	base, query, _ := strings.Cut(dsn, "?")
	path = base
	if rest, ok := strings.CutPrefix(base, "file:"); ok {
		if path, err = url.PathUnescape(rest); err != nil {
			return "", fmt.Errorf("sqlite: dsn %q: %w", dsn, err)
		}
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", fmt.Errorf("sqlite: dsn %q: %w", dsn, err)
	}
	if path == "" || path == ":memory:" || q.Get("mode") == "memory" {
		return "", fmt.Errorf("sqlite: dsn %q: want a database file path", dsn)
	}
	return path, nil
}

// ensureFile creates the database file with mode 0600 if it is missing and
// makes sure an existing one is not readable by others.
func ensureFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("sqlite: chmod %s: %w", path, err)
	}
	return nil
}

// openPool opens a connection pool on dsn with the extra parameters.
func openPool(dsn string, params []string, conns int) (*sql.DB, error) {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	db, err := sql.Open("sqlite", dsn+sep+strings.Join(params, "&"))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(0)
	return db, nil
}
