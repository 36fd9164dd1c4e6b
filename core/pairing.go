package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"
)

// ErrAlreadyPaired is Pairing.Offer's error for an identity that is paired
// already (this instance had not seen it yet): it needs no code.
var ErrAlreadyPaired = errors.New("core: already paired")

// Pairing lets strangers in by a code an approver confirms
// (pairing implements it; gateways.<name>.pairing turns it on per
// gateway, Auth.SetPairing). It is reached only from people's messages: a
// stranger's direct message on a gateway whose pairing is on, and the
// approvers' /pair, /pairs and /unpair. The LLM never sees any of it.
type Pairing interface {
	// Paired reports whether id was paired, from memory: it never waits on
	// the store (a background refresh keeps it up to date with other
	// instances). Auth asks it for every message its lists do not admit.
	Paired(id Identity) bool
	// Check reads the paired set from the store now and reports whether
	// id is in it. It is asked only for a journaled message (one another
	// instance let in) whose sender Paired does not know yet: never for a
	// stranger's message, which is not journaled.
	Check(ctx context.Context, id Identity) (bool, error)
	// Offer returns the pairing code of the stranger id, who wrote in
	// conv, and when it expires: the same code while it is valid. It
	// fails with ErrAlreadyPaired when id is paired.
	Offer(ctx context.Context, id Identity, conv Conversation) (code string, expires time.Time, err error)
	// Pair answers an approver's "/pair <arg>" sent in conv: reply is for
	// the approver; newcomer, when set, is the conversation where the
	// newly paired identity asked for its code, to be told.
	Pair(ctx context.Context, by Identity, conv Conversation, arg string) (reply string, newcomer Conversation)
	// PairsText answers /pairs: the paired identities.
	PairsText(ctx context.Context) string
	// Unpair answers an approver's "/unpair <identity>" sent in conv.
	Unpair(ctx context.Context, by Identity, conv Conversation, arg string) string
}

// authPairing is what Auth consults beyond its lists: the paired set, for
// the gateways whose pairing is on.
type authPairing struct {
	set Pairing
	on  map[string]bool
}

// SetPairing makes the identities p has paired on the gateways named in
// on count as allowed there, and makes those gateways hand out pairing
// codes (Pairs). Safe beside Allowed; a reload calls it again.
//
// With p set, the Engine answers /pair, /pairs and /unpair (through p),
// even while no gateway's pairing is on; nil p turns all of it off.
func (a *Auth) SetPairing(p Pairing, on []string) {
	if p == nil {
		a.pairing.Store(nil)
		return
	}
	m := make(map[string]bool, len(on))
	for _, gw := range on {
		m[gw] = true
	}
	a.pairing.Store(&authPairing{set: p, on: m})
}

// Pairs reports whether gateway's pairing is on.
func (a *Auth) Pairs(gateway string) bool {
	p := a.pairing.Load()
	return p != nil && p.on[gateway]
}

// pairer returns the Pairing SetPairing gave, or nil, and whether any
// gateway's pairing is on. A nil Auth has none.
func (a *Auth) pairer() (p Pairing, on bool) {
	if a == nil {
		return nil, false
	}
	ap := a.pairing.Load()
	if ap == nil {
		return nil, false
	}
	return ap.set, len(ap.on) > 0
}

// paired reports whether s's sender was paired on s's gateway, whose
// pairing is on.
func (a *Auth) paired(s Signal) bool {
	p := a.pairing.Load()
	return p != nil && p.on[s.Conv.Gateway] && s.From.Gateway() == s.Conv.Gateway && p.set.Paired(s.From)
}

// pairedInStore reports whether s's sender, whom this instance's lists
// do not admit, is paired on s's gateway according to the store
// (Pairing.Check): for a journaled message, let in by the instance that
// received it, which may have seen a pairing this one has not read yet.
func (a *Auth) pairedInStore(ctx context.Context, log zerolog.Logger, s Signal) bool {
	p := a.pairing.Load()
	if p == nil || !p.on[s.Conv.Gateway] || s.From.Gateway() != s.Conv.Gateway {
		return false
	}
	ok, err := p.set.Check(ctx, s.From)
	if err != nil {
		log.Warn().Err(err).Str("from", string(s.From)).Msg("pairing: the store could not be asked whether the sender of a journaled message is paired")
		return false
	}
	return ok
}

// pairedElsewhere reports whether s's sender, whom this instance's lists
// do not admit, was paired, maybe on another instance a moment ago, which
// this one's paired set has not read yet (Pairing.Check asks the store).
// It asks only for a journaled message (let in by the instance that
// received it) and, at most once a second, for a direct message from
// someone this instance handed a code to within the last ten minutes
// (told by the instance that paired them that they can talk now; as a
// stranger they would get no reply). Never for anyone else: a stranger
// cannot make the bot read its store.
func (e *Engine) pairedElsewhere(ctx context.Context, log zerolog.Logger, s Signal) bool {
	a := e.cfg.Auth
	if s.journal == nil && !(s.Private && a.Pairs(s.Conv.Gateway) && a.mayCheck(s.From, e.cfg.Now())) {
		return false
	}
	return a.pairedInStore(ctx, log, s)
}

// mayCheck reports whether the store may be asked now whether id was
// paired: id was told (their code) within tellGap, and the store was not
// asked so in the last second.
func (a *Auth) mayCheck(id Identity, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if last, ok := a.told[id]; !ok || now.Sub(last) >= a.tellGap {
		return false
	}
	if !a.checked.IsZero() && now.Sub(a.checked) < time.Second && !now.Before(a.checked) {
		return false
	}
	a.checked = now
	return true
}

// pairCommands are /help's lines for the pairing commands.
var pairCommands = []CommandHelp{
	{Name: "pair", Args: "<code>", Summary: "let in the stranger who was given this pairing code (approvers)"},
	{Name: "pairs", Summary: "the identities let in by pairing (approvers)"},
	{Name: "unpair", Args: "<gateway:id>", Summary: "take a pairing back (approvers)"},
}

// pairedNote is what a newcomer is told once an approver paired them.
const pairedNote = "An approver paired you: you can talk to me now."

// pairCommand answers /pair, /pairs and /unpair, for approvers only; a
// /pair that pairs someone has them told in the conversation where they
// asked for their code.
func (e *Engine) pairCommand(ctx context.Context, log zerolog.Logger, s Signal, p Pairing, name string) string {
	if !e.cfg.Auth.IsApprover(s.From) {
		log.Warn().Str("from", string(s.From)).Str("command", name).Msg("pairing command from an identity that is not an approver refused")
		return fmt.Sprintf("Not authorised (your identity is %s). Only the configured approvers can use /%s.", s.From, name)
	}
	_, arg := firstWord(s.Text)
	switch name {
	case "pairs":
		return p.PairsText(ctx)
	case "unpair":
		return p.Unpair(ctx, s.From, s.Conv, arg)
	}
	reply, newcomer := p.Pair(ctx, s.From, s.Conv, arg)
	if newcomer.Gateway == "" {
		return reply
	}
	if _, err := e.Act(ctx, Action{Kind: ActionReply, Conv: newcomer, Text: pairedNote}); err != nil {
		log.Error().Err(err).Str("newcomer", newcomer.Key()).Msg("pairing: the newcomer could not be told")
		return reply + " (I could not tell them: the bot's log has the details.)"
	}
	return reply
}

// strangerReply returns the one reply to a message from a sender not on
// the allow list, or "" when that sender was answered recently (at most
// once per ten minutes, and not at all under a flood: Refusal's limits).
// In a direct message on a gateway whose pairing is on it is their
// pairing code, else Refusal's text. Nothing of the message is stored.
func (e *Engine) strangerReply(ctx context.Context, log zerolog.Logger, s Signal) string {
	p, _ := e.cfg.Auth.pairer()
	if p == nil || !s.Private || !e.cfg.Auth.Pairs(s.Conv.Gateway) || s.From.Gateway() != s.Conv.Gateway {
		return e.cfg.Auth.Refusal(s, e.cfg.Now())
	}
	if !e.cfg.Auth.mayTell(e.cfg.Auth.told, e.cfg.Auth.tellGap, s.From, e.cfg.Now()) {
		return ""
	}
	code, expires, err := p.Offer(ctx, s.From, s.Conv)
	switch {
	case errors.Is(err, ErrAlreadyPaired):
		return "You are paired now: please send your message again."
	case err != nil:
		log.Error().Err(err).Msg("pairing: no code could be made")
		return "Sorry, I could not make you a pairing code just now (the bot's log has the details). Please write again later."
	}
	log.Info().Str("from", string(s.From)).Msg("pairing: code handed out")
	return fmt.Sprintf("I don't know you yet. Your pairing code is %s: ask one of my approvers to send me\n/pair %s\n"+
		"The code works once, until %s UTC; I will tell you here when you can talk to me.",
		code, code, expires.UTC().Format("2006-01-02 15:04"))
}
