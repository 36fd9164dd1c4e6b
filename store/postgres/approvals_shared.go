package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// What the instances sharing the database need of approvals beyond the
// one-process store: who runs an approved call (ClaimApprovalOn, in
// approvals.go), the runs of instances gone (InterruptRuns), and word of
// a resolution for the instance whose gateways sent the request messages
// (NotifyResolved, ListenResolved).

// resolvedChannel is the LISTEN/NOTIFY channel of resolutions.
const resolvedChannel = "gatehouse_approvals"

// Reconnection of the listener: the first wait, doubled up to the last.
const (
	listenRetryFirst = 500 * time.Millisecond
	listenRetryMax   = 30 * time.Second
)

// InterruptRuns moves to interrupted, in one conditional UPDATE, the
// executing approvals run by instances gone: another instance's claimed at
// or before now-window whose heartbeat is before now-window or missing, and
// with own self's (an earlier process of that name). A row locked by a
// concurrent caller is re-checked after it commits, so each approval is
// returned to one caller.
func (db *DB) InterruptRuns(ctx context.Context, self string, own bool, window time.Duration, note string, now time.Time) ([]record.Approval, error) {
	cutoff := nanos(now.Add(-window))
	rows, err := db.pool.Query(ctx, `UPDATE approvals SET status = $1, note = $2
		WHERE status = $3 AND (
			($4 AND instance = $5) OR
			(instance <> $5 AND resolved_at <= $6 AND NOT EXISTS (
				SELECT 1 FROM instances i WHERE i.name = approvals.instance AND i.last_seen > $6)))
		RETURNING `+approvalColumns,
		string(record.StatusInterrupted), note, string(record.StatusExecuting), own, self, cutoff)
	if err != nil {
		return nil, fmt.Errorf("postgres: interrupt runs: %w", err)
	}
	out, err := pgq.CollectRows(rows, func(r pgq.CollectableRow) (record.Approval, error) { return scanApproval(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: interrupt runs: %w", err)
	}
	return out, nil
}

// NotifyResolved tells every listening instance that the approval token
// changed state.
func (db *DB) NotifyResolved(ctx context.Context, from, token string) error {
	if _, err := db.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, resolvedChannel, from+"\n"+token); err != nil {
		return fmt.Errorf("postgres: notify resolution: %w", err)
	}
	return nil
}

// ListenResolved listens on a connection of its own (not the pool's) and
// calls on for each resolution until ctx ends, listening each time it
// has begun to listen; when the connection drops it tells dropped why and
// connects again, waiting longer after each failure.
func (db *DB) ListenResolved(ctx context.Context, listening func(), on func(from, token string), dropped func(error)) error {
	wait := listenRetryFirst
	for {
		err := db.listenOnce(ctx, on, func() {
			wait = listenRetryFirst
			listening()
		})
		if ctx.Err() != nil {
			return nil
		}
		dropped(err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		wait = min(2*wait, listenRetryMax)
	}
}

// listenOnce connects, listens and delivers notifications until the
// connection fails or ctx ends; listening is called once it listens.
func (db *DB) listenOnce(ctx context.Context, on func(from, token string), listening func()) error {
	conn, err := pgq.Connect(ctx, db.pool.Config())
	if err != nil {
		return fmt.Errorf("listen for resolutions: %w", connectError(whereConfig(db.pool.Config()), err))
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+resolvedChannel); err != nil {
		return fmt.Errorf("postgres: listen for resolutions: %w", err)
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("postgres: listen for resolutions: %w", err)
		}
		from, token, ok := strings.Cut(n.Payload, "\n")
		if !ok {
			continue
		}
		on(from, token)
	}
}
