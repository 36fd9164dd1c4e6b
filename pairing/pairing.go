// Package pairing lets strangers in by a code an approver confirms
// (gateways.<name>.pairing): a stranger who writes to the bot in a direct
// message gets a pairing code, and an approver's "/pair CODE" on any
// gateway puts that stranger on their gateway's allow list, kept in the
// store. Manager is the core.Pairing the Engine and core.Auth consult.
package pairing

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// Store keeps the codes and the paired identities: the methods of
// store.Pairings, listed here so that this package needs only
// store/record (store/storetest.PairingContract checks them).
type Store interface {
	OfferPairingCode(ctx context.Context, c record.PairingCode) (record.PairingCode, error)
	PairingCodes(ctx context.Context) ([]record.PairingCode, error)
	Pair(ctx context.Context, id core.Identity, hash string, by core.Identity) (record.Pairing, error)
	PairedIdentities(ctx context.Context) ([]record.Pairing, error)
	Unpair(ctx context.Context, id core.Identity) (record.Pairing, error)
}

// Audit is the audit log pairings and unpairings are written to.
type Audit interface {
	AppendAudit(ctx context.Context, e record.AuditEntry) error
}

// Defaults of Options.
const (
	// CodeTTL is how long a pairing code is valid.
	CodeTTL = time.Hour
	// kickGap is how often, at most, a miss makes a shared store's paired
	// set be read again before its Refresh.
	kickGap = time.Second
	// maxListed bounds the lines of /pairs.
	maxListed = 100
)

// Options configure a Manager.
type Options struct {
	Store Store // required
	Audit Audit // required
	Log   zerolog.Logger
	// Now is the clock of the codes' expiry; nil is time.Now.
	Now func() time.Time
	// Refresh, when positive, is how often Run reads the paired set again
	// from the store, for a store several instances share: their pairings
	// and unpairings are seen within it (a miss asks for a read sooner, at
	// most once a second). Zero: this process is the store's only writer,
	// and the set read at New stays true by itself.
	Refresh time.Duration
	// Rand is the source of the codes; nil is crypto/rand.Reader.
	Rand io.Reader
}

// Manager hands out pairing codes, pairs and unpairs, and keeps the
// paired set in memory for core.Auth.
type Manager struct {
	o    Options
	kick chan struct{}

	mu   sync.RWMutex
	set  map[core.Identity]bool
	gen  uint64    // bumped by every local change of set
	read time.Time // when the set was last read from the store
}

var _ core.Pairing = (*Manager)(nil)

// New returns a Manager with the paired set read from the store.
func New(ctx context.Context, o Options) (*Manager, error) {
	if o.Store == nil || o.Audit == nil {
		return nil, errors.New("pairing: a store and an audit log are required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	m := &Manager{o: o, kick: make(chan struct{}, 1), set: map[core.Identity]bool{}}
	if err := m.load(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// Paired reports whether id is paired, from memory. On a miss with a
// shared store it asks Run for an early read (never waiting for it).
func (m *Manager) Paired(id core.Identity) bool {
	m.mu.RLock()
	ok := m.set[id]
	m.mu.RUnlock()
	if !ok && m.o.Refresh > 0 {
		select {
		case m.kick <- struct{}{}:
		default:
		}
	}
	return ok
}

// Check reads the paired set from the store now and reports whether id
// is in it (core.Pairing.Check: for a journaled message only).
func (m *Manager) Check(ctx context.Context, id core.Identity) (bool, error) {
	if err := m.load(ctx); err != nil {
		return false, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.set[id], nil
}

// Reload reads the paired set from the store now: what the wiring calls
// when a shared store says another instance paired or unpaired someone
// (so that an /unpair there applies here at once, not at the next
// Refresh). A failed read keeps the set as it was.
func (m *Manager) Reload(ctx context.Context) error { return m.load(ctx) }

// Run reads the paired set again every Options.Refresh, and sooner (at
// most once a second) when a miss asks, until ctx ends. Without Refresh it
// only waits for ctx. A failed read keeps the set as it was (logged).
func (m *Manager) Run(ctx context.Context) error {
	if m.o.Refresh <= 0 {
		<-ctx.Done()
		return nil
	}
	tick := time.NewTicker(m.o.Refresh)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-m.kick:
			m.mu.RLock()
			recent := time.Since(m.read) < kickGap
			m.mu.RUnlock()
			if recent {
				continue
			}
		}
		if err := m.load(ctx); err != nil && ctx.Err() == nil {
			m.o.Log.Warn().Err(err).Msg("pairing: paired identities not read again; the last read stays")
		}
	}
}

// load reads the paired set from the store. A local change made while
// it read wins: the read is dropped and the next one counts.
func (m *Manager) load(ctx context.Context) error {
	m.mu.RLock()
	gen := m.gen
	m.mu.RUnlock()
	list, err := m.o.Store.PairedIdentities(ctx)
	if err != nil {
		return fmt.Errorf("pairing: read paired identities: %w", err)
	}
	set := make(map[core.Identity]bool, len(list))
	for _, p := range list {
		set[p.Identity] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read = time.Now()
	if m.gen == gen {
		m.set = set
	}
	return nil
}

// note records a local pairing (on) or unpairing in the set.
func (m *Manager) note(id core.Identity, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	if on {
		m.set[id] = true
	} else {
		delete(m.set, id)
	}
}

// Offer returns id's pending code, or a new one valid for CodeTTL.
func (m *Manager) Offer(ctx context.Context, id core.Identity, conv core.Conversation) (string, time.Time, error) {
	now := m.o.Now()
	for range 3 {
		code, err := NewCode(m.o.Rand)
		if err != nil {
			return "", time.Time{}, err
		}
		c := record.PairingCode{Identity: id, Conv: conv.Key(), Code: code, Hash: hashCode(code), Created: now, Expires: now.Add(CodeTTL)}
		got, err := m.o.Store.OfferPairingCode(ctx, c)
		switch {
		case errors.Is(err, record.ErrDuplicate):
			continue // another stranger's pending code: draw again
		case errors.Is(err, record.ErrPaired):
			m.note(id, true)
			return "", time.Time{}, core.ErrAlreadyPaired
		case err != nil:
			return "", time.Time{}, fmt.Errorf("pairing: offer a code to %s: %w", id, err)
		}
		return got.Code, got.Expires, nil
	}
	return "", time.Time{}, fmt.Errorf("pairing: offer a code to %s: three codes drawn were all taken", id)
}

// wrongCode answers a /pair whose code is not pending: the same words
// whether it never existed, expired, or was used, so the answer says
// nothing of which codes exist.
const wrongCode = "That pairing code is wrong or has expired (a code works once, for an hour). " +
	"Ask the newcomer to write to me again in a direct message: they get their current code."

// Pair pairs the stranger whose code arg is. The code is found among
// the pending ones by its SHA-256, compared with each in constant time.
func (m *Manager) Pair(ctx context.Context, by core.Identity, conv core.Conversation, arg string) (string, core.Conversation) {
	code, ok := ParseCode(arg)
	if !ok {
		return fmt.Sprintf("Usage: /pair <code> — the %d-character code the newcomer was given (letters and digits; no 0, O, 1, I or L).", CodeLen), core.Conversation{}
	}
	pending, err := m.o.Store.PairingCodes(ctx)
	if err != nil {
		m.o.Log.Error().Err(err).Msg("pairing: could not read the pending codes")
		return "Could not read the pairing codes (storage error).", core.Conversation{}
	}
	match, found := find(pending, code)
	if !found {
		m.o.Log.Info().Str("by", string(by)).Msg("pairing: /pair with a code that is not pending")
		return wrongCode, core.Conversation{}
	}
	p, err := m.o.Store.Pair(ctx, match.Identity, match.Hash, by)
	switch {
	case errors.Is(err, record.ErrNotFound):
		return wrongCode, core.Conversation{} // used or expired since it was read
	case err != nil:
		m.o.Log.Error().Err(err).Msg("pairing: could not pair")
		return "Could not pair (storage error).", core.Conversation{}
	}
	m.note(p.Identity, true)
	m.o.Log.Info().Str("identity", string(p.Identity)).Str("by", string(by)).Msg("pairing: paired")
	m.audit(ctx, conv, p.Identity, by, "paired", fmt.Sprintf("%s paired by %s", p.Identity, by))
	who := textutil.GraphicLine(string(p.Identity))
	newcomer, err := core.ParseConversation(p.Conv)
	if err != nil {
		m.o.Log.Error().Err(err).Msg("pairing: the newcomer's conversation does not parse; not told")
		return fmt.Sprintf("Paired %s: they can talk to me now. /unpair %s takes it back.", who, who), core.Conversation{}
	}
	return fmt.Sprintf("Paired %s: they can talk to me now, and I am telling them. /unpair %s takes it back.", who, who), newcomer
}

// find returns the pending code whose hash is code's, comparing with
// every pending code (no early exit) in constant time.
func find(pending []record.PairingCode, code string) (record.PairingCode, bool) {
	sum := sha256.Sum256([]byte(code))
	var match record.PairingCode
	found := 0
	for _, c := range pending {
		want, err := hex.DecodeString(c.Hash)
		if err != nil || len(want) != len(sum) {
			continue
		}
		if subtle.ConstantTimeCompare(sum[:], want) == 1 {
			match, found = c, 1
		}
	}
	return match, found == 1
}

// PairsText lists the paired identities, oldest first.
func (m *Manager) PairsText(ctx context.Context) string {
	list, err := m.o.Store.PairedIdentities(ctx)
	if err != nil {
		m.o.Log.Error().Err(err).Msg("pairing: could not list the paired identities")
		return "Could not read the paired identities (storage error)."
	}
	if len(list) == 0 {
		return "Nobody is paired. A stranger who writes to me in a direct message on a gateway with pairing on gets a code for /pair."
	}
	lines := []string{fmt.Sprintf("Paired (%d; /unpair <identity> takes one back):", len(list))}
	for i, p := range list {
		if i == maxListed {
			lines = append(lines, fmt.Sprintf("… and %d more", len(list)-maxListed))
			break
		}
		lines = append(lines, fmt.Sprintf("%s — by %s, %s", textutil.GraphicLine(string(p.Identity)),
			textutil.GraphicLine(string(p.By)), p.At.UTC().Format("2006-01-02 15:04 UTC")))
	}
	return strings.Join(lines, "\n")
}

// Unpair takes back the pairing of the identity arg names, as /pairs
// shows it.
func (m *Manager) Unpair(ctx context.Context, by core.Identity, conv core.Conversation, arg string) string {
	id, ok := parseIdentity(arg)
	if !ok {
		return "Usage: /unpair <gateway:id> — the identity as /pairs shows it (gateway:1234)."
	}
	p, err := m.o.Store.Unpair(ctx, id)
	who := textutil.GraphicLine(string(id))
	switch {
	case errors.Is(err, record.ErrNotFound):
		return fmt.Sprintf("%s is not paired. /pairs lists who is.", who)
	case err != nil:
		m.o.Log.Error().Err(err).Msg("pairing: could not unpair")
		return "Could not unpair (storage error)."
	}
	m.note(p.Identity, false)
	m.o.Log.Info().Str("identity", string(p.Identity)).Str("by", string(by)).Msg("pairing: unpaired")
	m.audit(ctx, conv, p.Identity, by, "unpaired", fmt.Sprintf("%s unpaired by %s (paired by %s)", p.Identity, by, p.By))
	return fmt.Sprintf("Unpaired %s: I no longer talk to them, unless an allow list names them.", who)
}

// maxIdentity bounds an /unpair argument.
const maxIdentity = 256

// parseIdentity reads "gateway:id", one word of printable ASCII.
func parseIdentity(arg string) (core.Identity, bool) {
	arg = strings.TrimSpace(arg)
	gw, rest, ok := strings.Cut(arg, ":")
	if !ok || gw == "" || rest == "" || len(arg) > maxIdentity {
		return "", false
	}
	for _, r := range arg {
		if r <= ' ' || r > '~' {
			return "", false
		}
	}
	return core.Identity(arg), true
}

// audit writes who paired (or unpaired) whom.
func (m *Manager) audit(ctx context.Context, conv core.Conversation, id, by core.Identity, outcome, detail string) {
	args, _ := json.Marshal(map[string]string{"identity": string(id)}) //nolint:errchkjson // a map of strings
	e := record.AuditEntry{At: m.o.Now(), Conv: conv.Key(), Tool: "pairing", Args: string(args),
		RequestedBy: id, ApprovedBy: by, Outcome: outcome, Detail: detail}
	if err := m.o.Audit.AppendAudit(context.WithoutCancel(ctx), e); err != nil {
		m.o.Log.Error().Err(err).Msg("pairing: audit append failed")
	}
}

// hashCode is the hex SHA-256 of a code, as the store keeps it.
func hashCode(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}
