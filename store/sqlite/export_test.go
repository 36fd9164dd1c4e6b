package sqlite

import "context"

// OpenWithoutLock opens a second writable handle on a database another
// handle holds, as two processes would have before the lock existed.
func OpenWithoutLock(ctx context.Context, dsn string, o Options) (*DB, error) {
	o.noLock = true
	return Open(ctx, dsn, o)
}
