package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

const pairingCodeColumns = `identity, conv, code, code_hash, created, expires`

// pairingLock is the transaction-level advisory lock that makes the
// offers of all instances one at a time, so that the bound on pending
// codes holds under concurrent offers ("pairing" in ASCII).
const pairingLock = 0x70616972696e67

// OfferPairingCode returns c.Identity's pending code, or stores c. Offers
// run one at a time across instances (an advisory lock held by the
// transaction).
func (db *DB) OfferPairingCode(ctx context.Context, c record.PairingCode) (record.PairingCode, error) {
	var out record.PairingCode
	err := pgq.BeginFunc(ctx, db.pool, func(tx pgq.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(pairingLock)); err != nil {
			return fmt.Errorf("postgres: offer pairing code: lock: %w", err)
		}
		var paired bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM paired WHERE identity = $1)`, string(c.Identity)).Scan(&paired); err != nil {
			return fmt.Errorf("postgres: offer pairing code: %w", err)
		}
		if paired {
			return record.ErrPaired
		}
		if _, err := tx.Exec(ctx, `DELETE FROM pairing_codes WHERE expires <= $1`, nanos(db.now())); err != nil {
			return fmt.Errorf("postgres: offer pairing code: expire: %w", err)
		}
		var err error
		out, err = scanPairingCode(tx.QueryRow(ctx, `SELECT `+pairingCodeColumns+` FROM pairing_codes WHERE identity = $1`, string(c.Identity)))
		if err == nil {
			return nil // the same code while it is valid
		}
		if !errors.Is(err, pgq.ErrNoRows) {
			return fmt.Errorf("postgres: offer pairing code: %w", err)
		}
		tag, err := tx.Exec(ctx, `INSERT INTO pairing_codes (identity, seq, conv, code, code_hash, created, expires)
			VALUES ($1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM pairing_codes), $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
			string(c.Identity), c.Conv, c.Code, c.Hash, nanos(c.Created), nanos(c.Expires))
		if err != nil {
			return fmt.Errorf("postgres: offer pairing code: %w", err)
		}
		if tag.RowsAffected() != 1 {
			// The hash is another identity's pending code.
			return fmt.Errorf("postgres: offer pairing code: %w", record.ErrDuplicate)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM pairing_codes WHERE seq IN
			(SELECT seq FROM pairing_codes ORDER BY seq DESC OFFSET $1)`, store.MaxPairingCodes); err != nil {
			return fmt.Errorf("postgres: offer pairing code: trim: %w", err)
		}
		out = c
		return nil
	})
	if err != nil {
		return record.PairingCode{}, err
	}
	return out, nil
}

// PairingCodes lists the pending codes, oldest first.
func (db *DB) PairingCodes(ctx context.Context) ([]record.PairingCode, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+pairingCodeColumns+` FROM pairing_codes WHERE expires > $1 ORDER BY seq`, nanos(db.now()))
	if err != nil {
		return nil, fmt.Errorf("postgres: pairing codes: %w", err)
	}
	out, err := pgq.CollectRows(rows, func(r pgq.CollectableRow) (record.PairingCode, error) { return scanPairingCode(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: pairing codes: %w", err)
	}
	return out, nil
}

// Pair consumes id's pending code and records the pairing in one
// transaction: the DELETE is the single-use point across instances. The
// instances are told (WatchPairings) as it commits.
func (db *DB) Pair(ctx context.Context, id core.Identity, hash string, by core.Identity) (record.Pairing, error) {
	p := record.Pairing{Identity: id, By: by, At: db.now()}
	err := pgq.BeginFunc(ctx, db.pool, func(tx pgq.Tx) error {
		err := tx.QueryRow(ctx, `DELETE FROM pairing_codes WHERE identity = $1 AND code_hash = $2 AND expires > $3
			RETURNING conv`, string(id), hash, nanos(p.At)).Scan(&p.Conv)
		if errors.Is(err, pgq.ErrNoRows) {
			return record.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("postgres: pair: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO paired (identity, conv, paired_by, paired_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (identity) DO UPDATE SET conv = excluded.conv, paired_by = excluded.paired_by, paired_at = excluded.paired_at`,
			string(id), p.Conv, string(by), nanos(p.At)); err != nil {
			return fmt.Errorf("postgres: pair: %w", err)
		}
		if _, err := tx.Exec(ctx, `SELECT pg_notify('`+pairingChannel+`', '')`); err != nil {
			return fmt.Errorf("postgres: pair: notify: %w", err)
		}
		return nil
	})
	if err != nil {
		return record.Pairing{}, err
	}
	return p, nil
}

// PairedIdentities lists the paired identities, oldest first.
func (db *DB) PairedIdentities(ctx context.Context) ([]record.Pairing, error) {
	rows, err := db.pool.Query(ctx, `SELECT identity, conv, paired_by, paired_at FROM paired ORDER BY paired_at, identity`)
	if err != nil {
		return nil, fmt.Errorf("postgres: paired identities: %w", err)
	}
	out, err := pgq.CollectRows(rows, func(r pgq.CollectableRow) (record.Pairing, error) { return scanPairing(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: paired identities: %w", err)
	}
	return out, nil
}

// Unpair forgets id's pairing and tells the instances (WatchPairings) as
// the deletion commits.
func (db *DB) Unpair(ctx context.Context, id core.Identity) (record.Pairing, error) {
	p, err := scanPairing(db.pool.QueryRow(ctx, `WITH del AS (
		DELETE FROM paired WHERE identity = $1 RETURNING identity, conv, paired_by, paired_at)
		SELECT del.* FROM del, pg_notify('`+pairingChannel+`', '')`, string(id)))
	if errors.Is(err, pgq.ErrNoRows) {
		return record.Pairing{}, record.ErrNotFound
	}
	if err != nil {
		return record.Pairing{}, fmt.Errorf("postgres: unpair: %w", err)
	}
	return p, nil
}

func scanPairingCode(r pgq.Row) (record.PairingCode, error) {
	var c record.PairingCode
	var id string
	var created, expires int64
	if err := r.Scan(&id, &c.Conv, &c.Code, &c.Hash, &created, &expires); err != nil {
		return record.PairingCode{}, err
	}
	c.Identity, c.Created, c.Expires = core.Identity(id), fromNanos(created), fromNanos(expires)
	return c, nil
}

func scanPairing(r pgq.Row) (record.Pairing, error) {
	var p record.Pairing
	var id, by string
	var at int64
	if err := r.Scan(&id, &p.Conv, &by, &at); err != nil {
		return record.Pairing{}, err
	}
	p.Identity, p.By, p.At = core.Identity(id), core.Identity(by), fromNanos(at)
	return p, nil
}
