package hitl

import "github.com/gatehouse-bot/gatehouse/core"

// ProfileApprovers names the approvers a conversation's profile adds to
// Options.Approvers for that conversation's requests only (profiles[].approvers).
type ProfileApprovers interface {
	Approvers(conv core.Conversation) []core.Identity
}
