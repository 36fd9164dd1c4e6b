package postgres

import "context"

// OpenWithoutLock opens a second writable handle on a database another
// handle holds, as a second instance would once several are supported.
func OpenWithoutLock(ctx context.Context, dsn string, o Options) (*DB, error) {
	o.noLock = true
	return Open(ctx, dsn, o)
}
