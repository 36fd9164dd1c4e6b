package hitl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// tokenAttempts bounds the draws for a token not already stored. With 31^8
// tokens a second draw is already rare; running out means a broken source.
const tokenAttempts = 16

// Digest binds an approval to exactly a tool name and its arguments text:
// the hex SHA-256 of name, a NUL byte, and args.
func Digest(call llm.ToolCall) string {
	sum := sha256.Sum256([]byte(call.Name + "\x00" + call.Args))
	return hex.EncodeToString(sum[:])
}

// Hold records h as a pending approval, sends the request to the
// conversation that asked and to every notify target, and returns the tool
// result the LLM sees. It does not wait for a human. The returned text never
// holds the token. A target that cannot be reached is logged; only a store
// failure, or a call on behalf of nobody (h.From empty: four-eyes would
// have no requester to exclude), is an error.
func (b *Broker) Hold(ctx context.Context, h core.Held) (string, error) {
	if h.Call.Name == "" {
		return "", errors.New("hitl: hold: call without a tool name")
	}
	if h.From == "" {
		// With no requester, four-eyes would have nobody to exclude.
		return "", errors.New("hitl: hold: call on behalf of nobody (empty From)")
	}
	now := b.o.Now()
	if h.Again && b.heldBefore(ctx, h, now) {
		return heldText, nil
	}
	a := record.Approval{
		Conv: h.Conv, RequestedBy: h.From, Call: h.Call,
		Rule: h.Rule, Reason: h.Reason,
		Created: now, Expires: now.Add(b.o.TTL), Status: record.StatusPending,
	}
	a.Digest = boundDigest(b.view(a))
	if err := b.create(ctx, &a); err != nil {
		return "", err
	}
	b.audit(ctx, a, "requested", "")
	b.log.Info().Str("approval", b.ref(a.Token)).Str("conv", a.Conv.Key()).Str("tool", a.Call.Name).
		Str("requested_by", string(a.RequestedBy)).Msg("hitl: action held for approval")
	b.sendRequest(ctx, a, now, joinNotes(b.standingNote(ctx, a.Call), h.Note))
	b.noteDue(a)
	return heldText, nil
}

// heldBefore reports whether a turn taken over from a stopped instance
// (h.Again) proposes a call that its earlier run held already: a pending,
// unexpired request of h.Conv for the same call (Digest) by h.From. The
// request stands (it can be approved from any instance); none is raised
// twice. A store that cannot list says no: a second request beats none.
func (b *Broker) heldBefore(ctx context.Context, h core.Held, now time.Time) bool {
	list, err := b.o.Store.Approvals(ctx, record.StatusPending)
	if err != nil {
		b.log.Warn().Err(err).Str("conv", h.Conv.Key()).Msg("hitl: pending approvals not listed; a taken-over call is held again")
		return false
	}
	digest := Digest(h.Call)
	for _, a := range list {
		if a.Conv == h.Conv && callDigest(a.Digest) == digest && a.RequestedBy == h.From && a.Expires.After(now) {
			b.log.Info().Str("approval", b.ref(a.Token)).Str("conv", a.Conv.Key()).Str("tool", a.Call.Name).
				Msg("hitl: a taken-over turn proposed a call its earlier run held: the request stands, none raised again")
			return true
		}
	}
	return false
}

// standingNote says why a call that has a standing allow was held anyway:
// which of the files it names changed since the allow was added ("" when
// it has none, or none changed).
func (b *Broker) standingNote(ctx context.Context, call llm.ToolCall) string {
	s, changed, err := b.standing(ctx, call)
	switch {
	case err != nil && !errors.Is(err, record.ErrNotFound):
		return "The standing allow for this call could not be checked (see the log), so it needs approval again."
	case err != nil || len(changed) == 0:
		return ""
	case s.Files == nil:
		return fmt.Sprintf("Standing allow #%d was added before gatehouse bound the files a call names, so it needs approval again (approve always to bind them).", s.ID)
	}
	names := make([]string, len(changed))
	for i, p := range changed {
		names[i] = codeSpan(p)
	}
	if len(names) > 3 {
		names = append(names[:3], fmt.Sprintf("%d more", len(names)-3))
	}
	return fmt.Sprintf("%s changed since the standing allow #%d was added, so it needs approval again.", joinAnd(names), s.ID)
}

// joinNotes joins the non-empty notes, one a line.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "\n⚠ ")
}

// joinAnd joins words as "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// create stores a under a fresh token that no stored approval has.
func (b *Broker) create(ctx context.Context, a *record.Approval) error {
	for range tokenAttempts {
		tok, err := b.o.NewToken()
		if err != nil {
			return fmt.Errorf("hitl: hold: %w", err)
		}
		if _, err := b.o.Store.Approval(ctx, tok); err == nil {
			continue
		} else if !errors.Is(err, record.ErrNotFound) {
			return fmt.Errorf("hitl: hold: look up token: %w", err)
		}
		a.Token = tok
		err = b.o.Store.CreateApproval(ctx, *a)
		if errors.Is(err, record.ErrDuplicate) {
			continue
		}
		if err != nil {
			return fmt.Errorf("hitl: hold: store approval: %w", err)
		}
		return nil
	}
	return fmt.Errorf("hitl: hold: no unused token after %d attempts", tokenAttempts)
}

// sendRequest delivers the request message to every target; note, when
// set, says why a standing allow did not apply.
func (b *Broker) sendRequest(ctx context.Context, a record.Approval, now time.Time, note string) {
	// Approve always is offered on every request but those approved only
	// once: it allows exactly this tool with exactly these arguments,
	// which no rule needs to permit.
	prompt := requestPrompt(a)
	h := b.view(a)
	for _, conv := range b.targets(a.Conv, b.approverDirects(ctx, a)...) {
		if err := b.promptTo(ctx, conv, h, now, note, prompt); err != nil {
			b.log.Error().Err(err).Str("conv", conv.Key()).Str("approval", b.ref(a.Token)).Str("tool", a.Call.Name).
				Msg("hitl: could not deliver the approval request")
		}
	}
}

// targets returns conv, the notify targets and extra, without duplicates.
func (b *Broker) targets(conv core.Conversation, extra ...core.Conversation) []core.Conversation {
	seen := make(map[string]bool)
	var out []core.Conversation
	for _, c := range append(append([]core.Conversation{conv}, b.o.Notify...), extra...) {
		if c.Gateway == "" || seen[c.Key()] {
			continue
		}
		seen[c.Key()] = true
		out = append(out, c)
	}
	return out
}

// reply delivers a reply action, logging a failure at error level: the
// gateway has already retried, and an approval request or outcome nobody
// received leaves an action waiting, or a person uninformed.
func (b *Broker) reply(ctx context.Context, a core.Action) {
	a.Escaped = true // hitl's messages escape what they quote (render.go)
	if _, err := b.d.Act(ctx, a); err != nil {
		b.log.Error().Err(err).Str("conv", a.Conv.Key()).Msg("hitl: could not deliver message")
	}
}

// audit appends an audit entry about a, logging a failure.
func (b *Broker) audit(ctx context.Context, a record.Approval, outcome, detail string) {
	e := b.auditEntry(a, outcome, via(ctx, detail))
	if err := b.o.Audit.AppendAudit(ctx, e); err != nil {
		b.log.Error().Err(err).Str("approval", b.ref(a.Token)).Str("outcome", outcome).Msg("hitl: audit append failed")
	}
}

// auditEntry is the audit entry about a, now.
func (b *Broker) auditEntry(a record.Approval, outcome, detail string) record.AuditEntry {
	return record.AuditEntry{
		At: b.o.Now(), Conv: a.Conv.Key(), Tool: a.Call.Name, Args: clip(a.Call.Args, maxArgsForLLM),
		RequestedBy: a.RequestedBy, ApprovedBy: a.ResolvedBy, Outcome: outcome, Detail: detail,
		Token: a.Token,
	}
}
