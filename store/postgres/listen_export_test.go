package postgres

import "context"

// TerminateListeners cuts the connections of this database that listen
// for resolutions and returns how many it cut.
func (db *DB) TerminateListeners(ctx context.Context) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND query = 'LISTEN `+resolvedChannel+`') t`).Scan(&n)
	return n, err
}
