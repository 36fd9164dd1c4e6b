package hitl

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// The bounds of a grant's length ("/approve TOKEN for 30m").
const (
	MinGrant = time.Minute
	MaxGrant = 24 * time.Hour
)

// GrantStore keeps grants, numbered with the standing allows. The
// contract every implementation must meet is storetest.GrantContract.
type GrantStore interface {
	// AddGrant stores g (its ID is ignored) and returns it with its ID,
	// drawn from the standing allows' numbers. A grant of the same tool
	// and args in the same conversation by the same approver is replaced
	// by g under its ID: granting again sets a new expiry and binding.
	AddGrant(ctx context.Context, g record.Grant) (record.Grant, error)
	// Grants lists the grants not expired at now, in ID order.
	Grants(ctx context.Context, now time.Time) ([]record.Grant, error)
	// GrantsFor lists the grants of tool with exactly args in conv not
	// expired at now, in ID order.
	GrantsFor(ctx context.Context, tool, args, conv string, now time.Time) ([]record.Grant, error)
	// RemoveGrant deletes the grant with the ID and returns it, or
	// record.ErrNotFound.
	RemoveGrant(ctx context.Context, id int64) (record.Grant, error)
	// ExpireGrants deletes the grants expired at now (Expires at or
	// before it) and returns them, each to one caller only, however many
	// instances sweep at once.
	ExpireGrants(ctx context.Context, now time.Time) ([]record.Grant, error)
}

var (
	_ GrantStore  = (*MemoryStanding)(nil)
	_ core.Grants = (*Broker)(nil)
)

// defaultGrants is Options.Grants when it is nil: Standing when it keeps
// grants too (the stores and MemoryStanding do, numbering both in one
// series), else a MemoryStanding of its own.
func defaultGrants(g GrantStore, st StandingStore) GrantStore {
	if g != nil {
		return g
	}
	if g, ok := st.(GrantStore); ok {
		return g
	}
	return NewMemoryStanding()
}

// AddGrant stores g, or replaces the grant of the same call, conversation
// and granter.
func (m *MemoryStanding) AddGrant(_ context.Context, g record.Grant) (record.Grant, error) {
	if g.Tool == "" || g.Conv == "" || g.GrantedBy == "" {
		return record.Grant{}, errors.New("hitl: add grant: empty tool, conversation or granter")
	}
	g.Files = maps.Clone(g.Files)
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range m.grants {
		if x.Tool == g.Tool && x.Args == g.Args && x.Conv == g.Conv && x.GrantedBy == g.GrantedBy {
			g.ID = x.ID
			m.grants[i] = g
			return cloneGrant(g), nil
		}
	}
	m.next++
	g.ID = m.next
	m.grants = append(m.grants, g)
	return cloneGrant(g), nil
}

// Grants lists the grants not expired at now.
func (m *MemoryStanding) Grants(_ context.Context, now time.Time) ([]record.Grant, error) {
	return m.grantsWhere(func(g record.Grant) bool { return now.Before(g.Expires) }), nil
}

// GrantsFor lists the live grants of tool with exactly args in conv.
func (m *MemoryStanding) GrantsFor(_ context.Context, tool, args, conv string, now time.Time) ([]record.Grant, error) {
	return m.grantsWhere(func(g record.Grant) bool {
		return g.Tool == tool && g.Args == args && g.Conv == conv && now.Before(g.Expires)
	}), nil
}

// grantsWhere returns copies of the grants keep selects, in ID order.
func (m *MemoryStanding) grantsWhere(keep func(record.Grant) bool) []record.Grant {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []record.Grant
	for _, g := range m.grants {
		if keep(g) {
			out = append(out, cloneGrant(g))
		}
	}
	return out
}

// RemoveGrant deletes the grant with the ID.
func (m *MemoryStanding) RemoveGrant(_ context.Context, id int64) (record.Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, g := range m.grants {
		if g.ID == id {
			m.grants = append(m.grants[:i], m.grants[i+1:]...)
			return g, nil
		}
	}
	return record.Grant{}, record.ErrNotFound
}

// ExpireGrants deletes and returns the grants expired at now.
func (m *MemoryStanding) ExpireGrants(_ context.Context, now time.Time) ([]record.Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out, keep []record.Grant
	for _, g := range m.grants {
		if now.Before(g.Expires) {
			keep = append(keep, g)
		} else {
			out = append(out, g)
		}
	}
	m.grants = keep
	return out, nil
}

// cloneGrant copies g, so callers cannot change the stored Files.
func cloneGrant(g record.Grant) record.Grant {
	g.Files = maps.Clone(g.Files)
	return g
}

// Granted implements core.Grants for the policy gate: a's call is covered
// by a grant of its conversation that has not expired, whose granter is,
// with self-approval off, not the person who caused a, and whose bound
// files are all as they were. Like a standing allow, a grant outlives a
// reload that removes its granter from the approvers (an approver the
// request was escalated to is in none of the lists): it ends when it
// expires or by /unallow. A store or file
// error counts as not granted (the call is then held) and is logged.
func (b *Broker) Granted(ctx context.Context, a core.Action) (string, bool) {
	if a.Kind != core.ActionTool || core.ApprovedOnce(a.Call.Name) {
		return "", false
	}
	list, err := b.o.Grants.GrantsFor(ctx, a.Call.Name, a.Call.Args, a.Conv.Key(), b.o.Now())
	if err != nil {
		b.log.Error().Err(err).Str("tool", a.Call.Name).Msg("hitl: grant lookup failed; holding the action")
		return "", false
	}
	var cur map[string]string
	for _, g := range list {
		if !b.o.AllowSelfApproval && b.samePerson(g.GrantedBy, a.From) {
			continue
		}
		if cur == nil {
			if cur, err = bindFiles(b.o.Workspace, a.Call); err != nil {
				b.log.Error().Err(err).Int64("rule", g.ID).Msg("hitl: grant: could not bind files; holding the action")
				return "", false
			}
		}
		if changed := changedFiles(g.Files, cur); len(changed) > 0 {
			b.log.Info().Int64("rule", g.ID).Str("tool", a.Call.Name).Strs("changed", changed).
				Msg("hitl: files changed since the grant was given; holding the action")
			continue
		}
		b.log.Info().Int64("rule", g.ID).Str("tool", a.Call.Name).Str("conv", a.Conv.Key()).Msg("hitl: call runs under a grant")
		return grantRule(g), true
	}
	return "", false
}

// grantRule names g as the rule that allowed a call: the audit row of the
// run says "allowed by grant #7 by alpha:42 until …" (its use).
func grantRule(g record.Grant) string {
	return fmt.Sprintf("grant #%d by %s until %s", g.ID, g.GrantedBy, g.Expires.UTC().Format("2006-01-02 15:04:05 UTC"))
}

// profileNoGrant is said when an approver a conversation's profile adds
// asks for a grant.
const profileNoGrant = "No grant given: only hitl.approvers may give one; this call runs once."

// allowMore adds what an approval asks for beyond this call: a standing
// allow ("always") or a grant ("for 30m"). It returns the line saying so
// ("" when neither) and a function that audits it, to be called after
// the approval itself is audited.
func (b *Broker) allowMore(ctx context.Context, from core.Identity, a record.Approval, cmd Command) (string, func()) {
	none := func() {}
	switch {
	case (cmd.Always || cmd.For > 0) && !b.IsApprover(from) && !b.escalatedTo(a, from):
		// An approver a profile adds resolves that profile's requests
		// only; a standing allow would apply in every conversation, and
		// a grant would outlive this one request. An approver the
		// request was escalated to may approve once, always or for a
		// time (hitl.escalate).
		if cmd.Always {
			return profileNoStanding, none
		}
		return profileNoGrant, none
	case cmd.Always:
		return b.addStanding(ctx, a, true), none
	case cmd.For > 0:
		return b.addGrant(ctx, a, cmd.For)
	}
	return "", none
}

// addGrant stores the grant of a "for D" approval, bound to the workspace
// files the call names as they are now, and returns the line saying so
// and the function that audits it ("granted").
func (b *Broker) addGrant(ctx context.Context, a record.Approval, d time.Duration) (string, func()) {
	files, err := bindFiles(b.o.Workspace, a.Call)
	now := b.o.Now()
	var g record.Grant
	if err == nil {
		g, err = b.o.Grants.AddGrant(ctx, record.Grant{Tool: a.Call.Name, Args: a.Call.Args, Conv: a.Conv.Key(),
			GrantedBy: a.ResolvedBy, Granted: now, Expires: now.Add(d), Files: files})
	}
	if err != nil {
		b.log.Error().Err(err).Str("approval", b.ref(a.Token)).Msg("hitl: could not add grant")
		return "The grant could not be saved; identical calls will need approval again.", func() {}
	}
	b.log.Info().Int64("rule", g.ID).Str("tool", g.Tool).Str("conv", g.Conv).Str("by", string(g.GrantedBy)).
		Dur("for", d).Msg("hitl: grant given")
	line := fmt.Sprintf("Grant #%d given: calls identical to this one (same arguments, same files) in %s run without asking until %s (%s); /rules lists it, /unallow %d ends it.",
		g.ID, g.Conv, clockTime(g.Expires), humanDuration(d), g.ID)
	return line, func() {
		b.audit(ctx, a, "granted", fmt.Sprintf("grant #%d for %s in %s, until %s", g.ID, humanDuration(d), g.Conv, g.Expires.UTC().Format(time.RFC3339)))
	}
}

// ExpireGrants deletes the grants past their expiry and audits each
// ("grant-expired") once, whichever instance's sweep took it; it returns
// how many. Run's sweep calls it; a grant past its expiry covers nothing
// even before it is swept.
func (b *Broker) ExpireGrants(ctx context.Context) int {
	list, err := b.o.Grants.ExpireGrants(ctx, b.o.Now())
	if err != nil {
		b.log.Error().Err(err).Msg("hitl: grant expiry sweep failed")
		return 0
	}
	for _, g := range list {
		b.log.Info().Int64("rule", g.ID).Str("tool", g.Tool).Str("conv", g.Conv).Msg("hitl: grant expired")
		b.auditGrant(ctx, g, g.GrantedBy, "grant-expired", fmt.Sprintf("grant #%d by %s expired at %s", g.ID, g.GrantedBy, g.Expires.UTC().Format(time.RFC3339)))
	}
	return len(list)
}

// auditGrant appends an audit entry about g, logging a failure.
func (b *Broker) auditGrant(ctx context.Context, g record.Grant, by core.Identity, outcome, detail string) {
	e := record.AuditEntry{At: b.o.Now(), Conv: g.Conv, Tool: g.Tool, Args: clip(g.Args, maxArgsForLLM),
		ApprovedBy: by, Outcome: outcome, Detail: detail}
	if err := b.o.Audit.AppendAudit(ctx, e); err != nil {
		b.log.Error().Err(err).Int64("rule", g.ID).Str("outcome", outcome).Msg("hitl: audit append failed")
	}
}

// grantLines lists the live grants for /rules, with their expiry and
// granter; nil when there are none.
func (b *Broker) grantLines(ctx context.Context) ([]string, error) {
	now := b.o.Now()
	list, err := b.o.Grants.Grants(ctx, now)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	lines := []string{"Grants (calls identical to one approved call, in its conversation, until they expire; /unallow <number> ends one):"}
	for _, g := range list {
		lines = append(lines, fmt.Sprintf("#%d %s %s in %s — granted by %s, until %s (%s left)%s",
			g.ID, g.Tool, codeSpan(clip(textutil.GraphicJSON(g.Args), maxFieldRunes)), g.Conv, g.GrantedBy,
			g.Expires.UTC().Format("2006-01-02 15:04 UTC"), humanDuration(g.Expires.Sub(now)), boundText(record.StandingAllow{Files: g.Files})))
	}
	return lines, nil
}

// removeGrant ends grant id for /unallow, audited "unallowed"; found is
// false when there is no such grant.
func (b *Broker) removeGrant(ctx context.Context, from core.Identity, id int64) (reply string, found bool) {
	g, err := b.o.Grants.RemoveGrant(ctx, id)
	switch {
	case errors.Is(err, record.ErrNotFound):
		return "", false
	case err != nil:
		b.log.Error().Err(err).Int64("rule", id).Msg("hitl: could not remove grant")
		return "Could not remove the grant (storage error).", true
	}
	b.log.Info().Int64("rule", id).Str("tool", g.Tool).Str("by", string(from)).Msg("hitl: grant removed")
	b.auditGrant(ctx, g, from, "unallowed", fmt.Sprintf("grant #%d by %s removed", id, g.GrantedBy))
	return fmt.Sprintf("Removed grant #%d: %s %s in %s now needs approval again.", id, g.Tool, codeSpan(clip(textutil.GraphicJSON(g.Args), maxFieldRunes)), g.Conv), true
}
