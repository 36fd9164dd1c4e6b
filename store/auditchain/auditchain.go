// Package auditchain makes the audit log tamper-evident: each row carries
// the SHA-256 of its own content and of the row before it, one chain per
// database, and Verify walks it. The store drivers compute a row's hash
// with Sum when they append it (serialised in the database, so that the
// chain stays one chain with several instances); `bot audit verify` walks
// it with a Verifier.
//
// The chain shows a row edited, inserted or deleted by whoever got past
// the table's append-only triggers (a database owner, a backup restored and
// edited by hand) without recomputing every hash after it. It carries no
// secret: someone who rewrites the chain from the edited row on, and the
// recorded head, passes. Keeping the head hash `bot audit verify` prints
// somewhere else (a ticket, a log shipped off the host) closes that gap up
// to the time it was copied.
//
// # The row's content
//
// A row's hash is the lowercase hex SHA-256 of this encoding, the same in
// every driver:
//
//	"gatehouse audit v1\n"
//	then, for each field in this order: its length in bytes (decimal),
//	":", its bytes, "\n"
//
// with the fields prev (the hash of the row before, or the anchor's hash
// for the first chained row), at (Unix nanoseconds, decimal, 0 for an unset
// time: what both drivers store), conv, tool, args, requested_by,
// approved_by, outcome, detail, token. The row's id is not hashed: the
// chain's order is the ids' order, and appends take ids in chain order.
//
// # The anchor
//
// The migration that added the chain recorded the last row written before
// it (AnchorID) and how many there were (AnchorRows). Those rows carry no
// hash; the first chained row links to AnchorHash(AnchorID, AnchorRows), and
// Verify checks that the rows at or before the anchor are still as many
// (a deletion or insertion among them shows, an edit does not).
package auditchain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/gatehouse-bot/gatehouse/store/record"
)

// version heads the encoding: a change of it is a new version.
const version = "gatehouse audit v1\n"

// Sum is the hash of an audit entry e appended after the row whose hash is
// prev (see the package comment for the encoding).
func Sum(prev string, e record.AuditEntry) string {
	h := sha256.New()
	h.Write([]byte(version))
	at := int64(0)
	if !e.At.IsZero() {
		at = e.At.UnixNano()
	}
	for _, f := range []string{
		prev, strconv.FormatInt(at, 10), e.Conv, e.Tool, e.Args,
		string(e.RequestedBy), string(e.ApprovedBy), e.Outcome, e.Detail, e.Token,
	} {
		h.Write([]byte(strconv.Itoa(len(f)) + ":"))
		h.Write([]byte(f))
		h.Write([]byte("\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// AnchorHash is the hash the first chained row links to: that of the
// anchor recorded when the chain began, after rows rows ending at id
// (0, 0 for a database that had no audit rows then).
func AnchorHash(id, rows int64) string {
	s := sha256.Sum256([]byte(fmt.Sprintf("gatehouse audit anchor v1\n%d\n%d\n", id, rows)))
	return hex.EncodeToString(s[:])
}

// Head is the hash a new row links to, given the chain's anchor and head
// as stored: the head's hash, or the anchor's before any chained row.
func Head(a record.AuditAnchor) string {
	if a.HeadHash == "" {
		return AnchorHash(a.AnchorID, a.AnchorRows)
	}
	return a.HeadHash
}

// Break is where a chain does not hold: the row named by its id, and why.
type Break struct {
	ID  int64
	Why string
}

// Error says where the chain breaks.
func (b *Break) Error() string {
	return fmt.Sprintf("audit chain broken at row %d: %s", b.ID, b.Why)
}

// Result is what a verification found.
type Result struct {
	// Checked is how many chained rows matched (all of them when Break is nil).
	Checked int64
	// Legacy is how many rows were written before the chain (at or before
	// the anchor): counted, not hashed.
	Legacy   int64
	AnchorID int64
	// Head is the hash of the last row checked (the anchor's when none).
	Head   string
	HeadID int64
	// Break is the first row that does not match; nil when the chain holds.
	Break *Break
}

// Verifier walks one chain: Row for every row in id order, then Done.
// After a Break, further rows are ignored.
type Verifier struct {
	anchor    record.AuditAnchor
	res       Result
	sawHead   bool
	lastID    int64
	legacyEnd bool
}

// NewVerifier starts a walk of the chain whose anchor and head are a (read
// before the rows: rows appended during the walk pass if they link).
func NewVerifier(a record.AuditAnchor) *Verifier {
	return &Verifier{anchor: a, res: Result{
		AnchorID: a.AnchorID, Head: AnchorHash(a.AnchorID, a.AnchorRows), HeadID: a.AnchorID,
	}}
}

// Row checks the next row.
func (v *Verifier) Row(r record.AuditRow) {
	if v.res.Break != nil {
		return
	}
	if r.ID <= v.lastID {
		v.res.Break = &Break{r.ID, fmt.Sprintf("out of order after row %d", v.lastID)}
		return
	}
	v.lastID = r.ID
	if r.ID <= v.anchor.AnchorID {
		v.res.Legacy++
		return
	}
	if !v.legacyEnd {
		v.legacyEnd = true
		if v.res.Legacy != v.anchor.AnchorRows {
			v.res.Break = &Break{r.ID, fmt.Sprintf("the rows written before the chain (ids up to %d) are %d; the anchor recorded %d",
				v.anchor.AnchorID, v.res.Legacy, v.anchor.AnchorRows)}
			return
		}
	}
	switch {
	case r.Prev != v.res.Head:
		v.res.Break = &Break{r.ID, fmt.Sprintf("its link does not match the row before it (id %d): a row was deleted, inserted or edited", v.res.HeadID)}
	case Sum(r.Prev, r.Entry) != r.Hash:
		v.res.Break = &Break{r.ID, "its hash does not match its content: the row was edited"}
	case r.ID == v.anchor.HeadID && r.Hash != v.anchor.HeadHash:
		v.res.Break = &Break{r.ID, "its hash is not the chain's recorded head"}
	default:
		v.sawHead = v.sawHead || r.ID == v.anchor.HeadID
		v.res.Checked++
		v.res.Head, v.res.HeadID = r.Hash, r.ID
	}
}

// Done ends the walk and returns what it found.
func (v *Verifier) Done() Result {
	if v.res.Break != nil {
		return v.res
	}
	if !v.legacyEnd && v.res.Legacy != v.anchor.AnchorRows {
		v.res.Break = &Break{v.anchor.AnchorID, fmt.Sprintf("the rows written before the chain (ids up to %d) are %d; the anchor recorded %d",
			v.anchor.AnchorID, v.res.Legacy, v.anchor.AnchorRows)}
		return v.res
	}
	if v.anchor.HeadID > v.anchor.AnchorID && !v.sawHead {
		v.res.Break = &Break{v.anchor.HeadID, fmt.Sprintf("the chain's recorded last row is missing (the walk ended at row %d): rows were deleted", v.res.HeadID)}
	}
	return v.res
}

// Chain is a store's audit log read as a chain (store.AuditChain).
type Chain interface {
	AuditAnchor(ctx context.Context) (record.AuditAnchor, error)
	WalkAudit(ctx context.Context, fn func(record.AuditRow) error) error
}

var errBroken = errors.New("audit chain broken")

// Verify walks c's chain from its anchor. The error is the store's (it
// could not be read); a chain that does not hold is Result.Break.
func Verify(ctx context.Context, c Chain) (Result, error) {
	a, err := c.AuditAnchor(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("audit chain: %w", err)
	}
	v := NewVerifier(a)
	err = c.WalkAudit(ctx, func(r record.AuditRow) error {
		if v.Row(r); v.res.Break != nil {
			return errBroken // the rest need not be read
		}
		return nil
	})
	if err != nil && !errors.Is(err, errBroken) {
		return Result{}, fmt.Errorf("audit chain: %w", err)
	}
	return v.Done(), nil
}
