package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
)

// The statements are plain SQL that PostgreSQL runs as they are (with
// $n placeholders): the conditional upsert is the exactly-once point, and
// RowsAffected says who won.

// ClaimScheduleSlot records that instance runs the slot; exactly one
// caller per (name, slot) gets true.
func (db *DB) ClaimScheduleSlot(ctx context.Context, name string, slot time.Time, instance string) (bool, error) {
	res, err := db.exec(ctx, `INSERT INTO schedule_runs (name, slot, instance, claimed) VALUES (?, ?, ?, ?)
		ON CONFLICT (name, slot) DO NOTHING`, name, nanos(slot), instance, nanos(db.now()))
	if err != nil {
		return false, fmt.Errorf("sqlite: claim schedule slot %q: %w", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlite: claim schedule slot %q: %w", name, err)
	}
	return n == 1, nil
}

// AcquireLease takes a free or expired lease, or renews holder's own.
func (db *DB) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, fmt.Errorf("sqlite: acquire lease %q: ttl %v is not positive", name, ttl)
	}
	now := db.now()
	res, err := db.exec(ctx, `INSERT INTO leases (name, holder, expires) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
		WHERE leases.holder = excluded.holder OR leases.expires <= ?`,
		name, holder, nanos(now.Add(ttl)), nanos(now))
	if err != nil {
		return false, fmt.Errorf("sqlite: acquire lease %q: %w", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlite: acquire lease %q: %w", name, err)
	}
	return n == 1, nil
}

// ReleaseLease frees holder's lease at once.
func (db *DB) ReleaseLease(ctx context.Context, name, holder string) error {
	if _, err := db.exec(ctx, `DELETE FROM leases WHERE name = ? AND holder = ?`, name, holder); err != nil {
		return fmt.Errorf("sqlite: release lease %q: %w", name, err)
	}
	return nil
}

// LeaseHolders lists the unexpired leases by name.
func (db *DB) LeaseHolders(ctx context.Context) ([]store.Lease, error) {
	rows, err := db.query(ctx, `SELECT name, holder, expires FROM leases WHERE expires > ? ORDER BY name`, nanos(db.now()))
	if err != nil {
		return nil, fmt.Errorf("sqlite: lease holders: %w", err)
	}
	defer rows.Close()
	var out []store.Lease
	for rows.Next() {
		var l store.Lease
		var exp int64
		if err := rows.Scan(&l.Name, &l.Holder, &exp); err != nil {
			return nil, fmt.Errorf("sqlite: lease holders: %w", err)
		}
		l.Expires = fromNanos(exp)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: lease holders: %w", err)
	}
	return out, nil
}

// Heartbeat records that the instance is alive now.
func (db *DB) Heartbeat(ctx context.Context, in store.Instance) error {
	_, err := db.exec(ctx, `INSERT INTO instances (name, version, process, started, last_seen) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET version = excluded.version, process = excluded.process, started = excluded.started, last_seen = excluded.last_seen`,
		in.Name, in.Version, in.Process, nanos(in.Started), nanos(db.now()))
	if err != nil {
		return fmt.Errorf("sqlite: heartbeat %q: %w", in.Name, err)
	}
	return nil
}

// ClaimInstance records in's heartbeat unless another process's, seen
// within ttl, has the name; then it returns that one.
func (db *DB) ClaimInstance(ctx context.Context, in store.Instance, ttl time.Duration) (store.Instance, bool, error) {
	now := db.now()
	res, err := db.exec(ctx, `INSERT INTO instances (name, version, process, started, last_seen) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET version = excluded.version, process = excluded.process, started = excluded.started, last_seen = excluded.last_seen
		WHERE instances.process = excluded.process OR instances.last_seen <= ?`,
		in.Name, in.Version, in.Process, nanos(in.Started), nanos(now), nanos(now.Add(-ttl)))
	if err != nil {
		return store.Instance{}, false, fmt.Errorf("sqlite: claim instance %q: %w", in.Name, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return store.Instance{}, false, fmt.Errorf("sqlite: claim instance %q: %w", in.Name, err)
	} else if n == 1 {
		return in, true, nil
	}
	var held store.Instance
	var started, seen int64
	err = db.queryRow(ctx, `SELECT name, version, process, started, last_seen FROM instances WHERE name = ?`, in.Name).
		Scan(&held.Name, &held.Version, &held.Process, &started, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Instance{}, false, nil // gone meanwhile (a clean stop): claim again
	}
	if err != nil {
		return store.Instance{}, false, fmt.Errorf("sqlite: claim instance %q: %w", in.Name, err)
	}
	held.Started, held.LastSeen = fromNanos(started), fromNanos(seen)
	return held, false, nil
}

// Instances lists the instances seen within window of now, by name.
func (db *DB) Instances(ctx context.Context, window time.Duration) ([]store.Instance, error) {
	rows, err := db.query(ctx, `SELECT name, version, process, started, last_seen FROM instances WHERE last_seen >= ? ORDER BY name`,
		nanos(db.now().Add(-window)))
	if err != nil {
		return nil, fmt.Errorf("sqlite: instances: %w", err)
	}
	defer rows.Close()
	var out []store.Instance
	for rows.Next() {
		var in store.Instance
		var started, seen int64
		if err := rows.Scan(&in.Name, &in.Version, &in.Process, &started, &seen); err != nil {
			return nil, fmt.Errorf("sqlite: instances: %w", err)
		}
		in.Started, in.LastSeen = fromNanos(started), fromNanos(seen)
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: instances: %w", err)
	}
	return out, nil
}

// RemoveInstance forgets the instance name.
func (db *DB) RemoveInstance(ctx context.Context, name string) error {
	if _, err := db.exec(ctx, `DELETE FROM instances WHERE name = ?`, name); err != nil {
		return fmt.Errorf("sqlite: remove instance %q: %w", name, err)
	}
	return nil
}

// pruneCluster deletes schedule slots older than store.SlotKeep and
// instances not seen for store.InstanceKeep.
func (db *DB) pruneCluster(ctx context.Context) error {
	now := db.now()
	if _, err := db.w.ExecContext(ctx, `DELETE FROM schedule_runs WHERE slot < ?`, nanos(now.Add(-store.SlotKeep))); err != nil {
		return fmt.Errorf("sqlite: prune schedule slots: %w", err)
	}
	if _, err := db.w.ExecContext(ctx, `DELETE FROM instances WHERE last_seen < ?`, nanos(now.Add(-store.InstanceKeep))); err != nil {
		return fmt.Errorf("sqlite: prune instances: %w", err)
	}
	return nil
}
