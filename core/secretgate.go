package core

import (
	"context"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// SecretGate refuses replies that contain one of the bot's secrets or a
// string shaped like an API key, and tool calls whose arguments carry one of
// the bot's secrets (a way to exfiltrate it).
type SecretGate struct {
	Secrets *secrets.Set
}

var _ Gate = SecretGate{}

// Check implements Gate.
func (g SecretGate) Check(_ context.Context, a Action) Decision {
	switch a.Kind {
	case ActionReply:
		if g.Secrets.Leaks(a.Text) {
			return Decision{Verdict: Deny, Rule: "secret gate",
				Reason: "your reply contains a secret (a token or API key); never repeat secrets — answer again without it"}
		}
	case ActionTool:
		if g.Secrets.Contains(a.Call.Args) {
			return Decision{Verdict: Deny, Rule: "secret gate",
				Reason: "the arguments contain one of the bot's secrets; secrets may not leave the bot"}
		}
	}
	return Decision{Verdict: Allow}
}
