package gatewaytest

import (
	"context"
	"sync"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// Press is one call of Approvals.Press, as the gateway made it.
type Press struct {
	From     core.Identity
	Conv     core.Conversation
	Token    string
	Decision core.ApprovalDecision
}

// Approvals is a gateways.Approvals that records each press and answers
// every one with the same reply. It is safe for concurrent use.
type Approvals struct {
	mu      sync.Mutex
	presses []Press
	reply   string
	onPress func()
}

var _ gateways.Approvals = (*Approvals)(nil)

// NewApprovals returns an Approvals that answers every press with reply.
func NewApprovals(reply string) *Approvals { return &Approvals{reply: reply} }

// Press records the press, then returns the reply, as the broker does
// also handing it to ack when ack is not nil. A hook set with OnPress runs
// first, before the press is recorded.
func (a *Approvals) Press(_ context.Context, from core.Identity, conv core.Conversation, token string, d core.ApprovalDecision, ack func(toast string)) string {
	a.mu.Lock()
	hook := a.onPress
	a.mu.Unlock()
	if hook != nil {
		hook()
	}
	a.mu.Lock()
	a.presses = append(a.presses, Press{From: from, Conv: conv, Token: token, Decision: d})
	reply := a.reply
	a.mu.Unlock()
	if ack != nil {
		ack(reply)
	}
	return reply
}

// Calls returns a copy of the presses recorded so far, oldest first.
func (a *Approvals) Calls() []Press {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Press(nil), a.presses...)
}

// Forget drops the presses recorded so far.
func (a *Approvals) Forget() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.presses = nil
}

// SetReply changes what later presses are answered with.
func (a *Approvals) SetReply(reply string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reply = reply
}

// OnPress sets a hook each later press calls before it is recorded (to
// see what the gateway had done by then).
func (a *Approvals) OnPress(hook func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.onPress = hook
}
