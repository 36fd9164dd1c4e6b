package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

const pairingCodeColumns = `identity, conv, code, code_hash, created, expires`

// OfferPairingCode returns c.Identity's pending code, or stores c. The
// write transaction (one writer) makes concurrent offers one at a time.
func (db *DB) OfferPairingCode(ctx context.Context, c record.PairingCode) (record.PairingCode, error) {
	var out record.PairingCode
	err := db.inTx(ctx, "offer pairing code", relaxed, func(tx *sql.Tx) error {
		var paired int
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM paired WHERE identity = ?`, c.Identity).Scan(&paired)
		if err != nil {
			return fmt.Errorf("sqlite: offer pairing code: %w", err)
		}
		if paired > 0 {
			return record.ErrPaired
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM pairing_codes WHERE expires <= ?`, nanos(db.now())); err != nil {
			return fmt.Errorf("sqlite: offer pairing code: expire: %w", err)
		}
		out, err = scanPairingCode(tx.QueryRowContext(ctx, `SELECT `+pairingCodeColumns+` FROM pairing_codes WHERE identity = ?`, c.Identity))
		if err == nil {
			return nil // the same code while it is valid
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlite: offer pairing code: %w", err)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO pairing_codes (identity, seq, conv, code, code_hash, created, expires)
			VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM pairing_codes), ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			c.Identity, c.Conv, c.Code, c.Hash, nanos(c.Created), nanos(c.Expires))
		if err != nil {
			return fmt.Errorf("sqlite: offer pairing code: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			// The hash is another identity's pending code.
			return errors.Join(fmt.Errorf("sqlite: offer pairing code: %w", record.ErrDuplicate), err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM pairing_codes WHERE seq IN
			(SELECT seq FROM pairing_codes ORDER BY seq DESC LIMIT -1 OFFSET ?)`, store.MaxPairingCodes); err != nil {
			return fmt.Errorf("sqlite: offer pairing code: trim: %w", err)
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
	rows, err := db.query(ctx, `SELECT `+pairingCodeColumns+` FROM pairing_codes WHERE expires > ? ORDER BY seq`, nanos(db.now()))
	if err != nil {
		return nil, fmt.Errorf("sqlite: pairing codes: %w", err)
	}
	defer rows.Close()
	var out []record.PairingCode
	for rows.Next() {
		c, err := scanPairingCode(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: pairing codes: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: pairing codes: %w", err)
	}
	return out, nil
}

// Pair consumes id's pending code and records the pairing, in one
// durable transaction.
func (db *DB) Pair(ctx context.Context, id core.Identity, hash string, by core.Identity) (record.Pairing, error) {
	p := record.Pairing{Identity: id, By: by, At: db.now()}
	err := db.inTx(ctx, "pair", durable, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `DELETE FROM pairing_codes WHERE identity = ? AND code_hash = ? AND expires > ?
			RETURNING conv`, id, hash, nanos(p.At)).Scan(&p.Conv)
		if errors.Is(err, sql.ErrNoRows) {
			return record.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("sqlite: pair: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO paired (identity, conv, paired_by, paired_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (identity) DO UPDATE SET conv = excluded.conv, paired_by = excluded.paired_by, paired_at = excluded.paired_at`,
			id, p.Conv, by, nanos(p.At)); err != nil {
			return fmt.Errorf("sqlite: pair: %w", err)
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
	rows, err := db.query(ctx, `SELECT identity, conv, paired_by, paired_at FROM paired ORDER BY paired_at, identity`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: paired identities: %w", err)
	}
	defer rows.Close()
	var out []record.Pairing
	for rows.Next() {
		p, err := scanPairing(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: paired identities: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: paired identities: %w", err)
	}
	return out, nil
}

// Unpair forgets id's pairing.
func (db *DB) Unpair(ctx context.Context, id core.Identity) (record.Pairing, error) {
	var p record.Pairing
	err := db.inTx(ctx, "unpair", durable, func(tx *sql.Tx) error {
		var err error
		p, err = scanPairing(tx.QueryRowContext(ctx, `SELECT identity, conv, paired_by, paired_at FROM paired WHERE identity = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return record.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("sqlite: unpair: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM paired WHERE identity = ?`, id); err != nil {
			return fmt.Errorf("sqlite: unpair: %w", err)
		}
		return nil
	})
	if err != nil {
		return record.Pairing{}, err
	}
	return p, nil
}

// pairingScanner is a row or rows.
type pairingScanner interface{ Scan(dest ...any) error }

func scanPairingCode(r pairingScanner) (record.PairingCode, error) {
	var c record.PairingCode
	var created, expires int64
	if err := r.Scan(&c.Identity, &c.Conv, &c.Code, &c.Hash, &created, &expires); err != nil {
		return record.PairingCode{}, err
	}
	c.Created, c.Expires = fromNanos(created), fromNanos(expires)
	return c, nil
}

func scanPairing(r pairingScanner) (record.Pairing, error) {
	var p record.Pairing
	var at int64
	if err := r.Scan(&p.Identity, &p.Conv, &p.By, &at); err != nil {
		return record.Pairing{}, err
	}
	p.At = fromNanos(at)
	return p, nil
}
