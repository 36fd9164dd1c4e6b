package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

var _ store.ConfigFingerprints = (*DB)(nil)

// SetConfigFingerprint records fp beside the instance's heartbeat row.
func (db *DB) SetConfigFingerprint(ctx context.Context, name string, fp map[string]string) error {
	b, err := json.Marshal(fp)
	if err != nil {
		return fmt.Errorf("postgres: config fingerprint %q: %w", name, err)
	}
	tag, err := db.pool.Exec(ctx, `UPDATE instances SET config = $2 WHERE name = $1`, name, string(b))
	if err != nil {
		return fmt.Errorf("postgres: config fingerprint %q: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: config fingerprint %q: instance %w", name, record.ErrNotFound)
	}
	return nil
}

// ConfigFingerprints returns the fingerprints of the instances seen
// within window, by name.
func (db *DB) ConfigFingerprints(ctx context.Context, window time.Duration) (map[string]map[string]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT name, config FROM instances WHERE last_seen >= $1 AND config <> ''
		AND octet_length(config) <= $2 ORDER BY name`, nanos(db.now().Add(-window)), store.MaxFingerprint)
	if err != nil {
		return nil, fmt.Errorf("postgres: config fingerprints: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]string{}
	for rows.Next() {
		var name, config string
		if err := rows.Scan(&name, &config); err != nil {
			return nil, fmt.Errorf("postgres: config fingerprints: %w", err)
		}
		var fp map[string]string
		if json.Unmarshal([]byte(config), &fp) == nil && fp != nil {
			out[name] = fp
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: config fingerprints: %w", err)
	}
	return out, nil
}
