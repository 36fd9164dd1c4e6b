package core

import "context"

// Verdict is a gate's answer.
type Verdict uint8

// The verdicts, from most to least permissive.
const (
	Allow Verdict = iota + 1
	// NeedsApproval holds the action for a human.
	NeedsApproval
	// Deny refuses the action; the Decision's Reason goes back to the LLM.
	Deny
)

func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case NeedsApproval:
		return "approve"
	case Deny:
		return "deny"
	}
	return "unknown"
}

// Decision is a gate's verdict with its reason and the rule that made it.
type Decision struct {
	Verdict Verdict
	Reason  string // fed back to the LLM on Deny
	Rule    string // which rule decided, for logs and approval requests
}

// Gate is a deterministic check of an action. Gates run in order; the first
// Deny stops the chain; NeedsApproval holds unless a later gate denies.
type Gate interface {
	Check(ctx context.Context, a Action) Decision
}

// StandingAllows answers whether a human already approved exactly this tool
// with exactly these arguments for good ("/approve TOKEN always"). The policy
// gate consults it before holding an action, under the gate's context; it
// never overrides a deny rule. An error looking it up counts as not allowed.
type StandingAllows interface {
	StandingAllowed(ctx context.Context, tool, args string) bool
}

// Grants answers whether a grant ("/approve TOKEN for 30m") covers a: the
// same tool with the same arguments in the same conversation, given by
// someone who may approve a's requester's calls, not yet expired. rule
// names the grant for logs and the audit of the run ("grant #7 by …").
// The policy gate asks it, when its StandingAllows implements it, only
// where a standing allow would be asked: a grant never relaxes a deny. An
// error looking it up counts as not granted.
type Grants interface {
	Granted(ctx context.Context, a Action) (rule string, ok bool)
}

// CheckGates runs gates in order. The first Deny ends the chain;
// NeedsApproval holds unless a later gate denies; otherwise Allow, carrying
// the first rule that said so (for logs and the audit).
func CheckGates(ctx context.Context, gates []Gate, a Action) Decision {
	out := Decision{Verdict: Allow}
	for _, g := range gates {
		d := g.Check(ctx, a)
		switch {
		case d.Verdict == Deny:
			return d
		case d.Verdict == NeedsApproval && out.Verdict != NeedsApproval:
			out = d
		case d.Verdict == Allow && out.Verdict == Allow && out.Rule == "":
			out.Rule = d.Rule
		}
	}
	return out
}
