package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

// The cluster primitives are store/sqlite's statements with $n
// placeholders: each conditional upsert is one statement, so it is the
// exactly-once point across connections and processes, and the rows it
// affected say who won.

// ClaimScheduleSlot records that instance runs the slot; exactly one
// caller per (name, slot) gets true.
func (db *DB) ClaimScheduleSlot(ctx context.Context, name string, slot time.Time, instance string) (bool, error) {
	tag, err := db.pool.Exec(ctx, `INSERT INTO schedule_runs (name, slot, instance, claimed) VALUES ($1, $2, $3, $4)
		ON CONFLICT (name, slot) DO NOTHING`, name, nanos(slot), instance, nanos(db.now()))
	if err != nil {
		return false, fmt.Errorf("postgres: claim schedule slot %q: %w", name, err)
	}
	return tag.RowsAffected() == 1, nil
}

// AcquireLease takes a free or expired lease, or renews holder's own.
func (db *DB) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, fmt.Errorf("postgres: acquire lease %q: ttl %v is not positive", name, ttl)
	}
	now := db.now()
	tag, err := db.pool.Exec(ctx, `INSERT INTO leases (name, holder, expires) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
		WHERE leases.holder = excluded.holder OR leases.expires <= $4`,
		name, holder, nanos(now.Add(ttl)), nanos(now))
	if err != nil {
		return false, fmt.Errorf("postgres: acquire lease %q: %w", name, err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseLease frees holder's lease at once.
func (db *DB) ReleaseLease(ctx context.Context, name, holder string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM leases WHERE name = $1 AND holder = $2`, name, holder); err != nil {
		return fmt.Errorf("postgres: release lease %q: %w", name, err)
	}
	return nil
}

// LeaseHolders lists the unexpired leases by name.
func (db *DB) LeaseHolders(ctx context.Context) ([]store.Lease, error) {
	rows, err := db.pool.Query(ctx, `SELECT name, holder, expires FROM leases WHERE expires > $1 ORDER BY name`,
		nanos(db.now()))
	if err != nil {
		return nil, fmt.Errorf("postgres: lease holders: %w", err)
	}
	out, err := pgq.CollectRows(rows, func(r pgq.CollectableRow) (store.Lease, error) {
		var l store.Lease
		var exp int64
		err := r.Scan(&l.Name, &l.Holder, &exp)
		l.Expires = fromNanos(exp)
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: lease holders: %w", err)
	}
	return out, nil
}

// Heartbeat records that the instance is alive now.
func (db *DB) Heartbeat(ctx context.Context, in store.Instance) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO instances (name, version, process, started, last_seen) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (name) DO UPDATE SET version = excluded.version, process = excluded.process, started = excluded.started, last_seen = excluded.last_seen`,
		in.Name, in.Version, in.Process, nanos(in.Started), nanos(db.now()))
	if err != nil {
		return fmt.Errorf("postgres: heartbeat %q: %w", in.Name, err)
	}
	return nil
}

// ClaimInstance records in's heartbeat unless another process's, seen
// within ttl, has the name; then it returns that one.
func (db *DB) ClaimInstance(ctx context.Context, in store.Instance, ttl time.Duration) (store.Instance, bool, error) {
	now := db.now()
	tag, err := db.pool.Exec(ctx, `INSERT INTO instances (name, version, process, started, last_seen) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (name) DO UPDATE SET version = excluded.version, process = excluded.process, started = excluded.started, last_seen = excluded.last_seen
		WHERE instances.process = excluded.process OR instances.last_seen <= $6`,
		in.Name, in.Version, in.Process, nanos(in.Started), nanos(now), nanos(now.Add(-ttl)))
	if err != nil {
		return store.Instance{}, false, fmt.Errorf("postgres: claim instance %q: %w", in.Name, err)
	}
	if tag.RowsAffected() == 1 {
		return in, true, nil
	}
	var held store.Instance
	var started, seen int64
	err = db.pool.QueryRow(ctx, `SELECT name, version, process, started, last_seen FROM instances WHERE name = $1`, in.Name).
		Scan(&held.Name, &held.Version, &held.Process, &started, &seen)
	if errors.Is(err, pgq.ErrNoRows) {
		return store.Instance{}, false, nil // gone meanwhile (a clean stop): claim again
	}
	if err != nil {
		return store.Instance{}, false, fmt.Errorf("postgres: claim instance %q: %w", in.Name, err)
	}
	held.Started, held.LastSeen = fromNanos(started), fromNanos(seen)
	return held, false, nil
}

// Instances lists the instances seen within window of now, by name.
func (db *DB) Instances(ctx context.Context, window time.Duration) ([]store.Instance, error) {
	rows, err := db.pool.Query(ctx, `SELECT name, version, process, started, last_seen FROM instances
		WHERE last_seen >= $1 ORDER BY name`, nanos(db.now().Add(-window)))
	if err != nil {
		return nil, fmt.Errorf("postgres: instances: %w", err)
	}
	out, err := pgq.CollectRows(rows, func(r pgq.CollectableRow) (store.Instance, error) {
		var in store.Instance
		var started, seen int64
		err := r.Scan(&in.Name, &in.Version, &in.Process, &started, &seen)
		in.Started, in.LastSeen = fromNanos(started), fromNanos(seen)
		return in, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: instances: %w", err)
	}
	return out, nil
}

// RemoveInstance forgets the instance name.
func (db *DB) RemoveInstance(ctx context.Context, name string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM instances WHERE name = $1`, name); err != nil {
		return fmt.Errorf("postgres: remove instance %q: %w", name, err)
	}
	return nil
}

// pruneCluster deletes schedule slots older than store.SlotKeep and
// instances not seen for store.InstanceKeep.
func (db *DB) pruneCluster(ctx context.Context) error {
	now := db.now()
	if _, err := db.pool.Exec(ctx, `DELETE FROM schedule_runs WHERE slot < $1`, nanos(now.Add(-store.SlotKeep))); err != nil {
		return fmt.Errorf("postgres: prune schedule slots: %w", err)
	}
	if _, err := db.pool.Exec(ctx, `DELETE FROM instances WHERE last_seen < $1`, nanos(now.Add(-store.InstanceKeep))); err != nil {
		return fmt.Errorf("postgres: prune instances: %w", err)
	}
	return nil
}
