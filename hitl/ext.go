package hitl

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

var (
	_ core.CommandLister  = (*Broker)(nil)
	_ core.RunCanceller   = (*Broker)(nil)
	_ core.StatusReporter = (*Broker)(nil)
)

// Commands lists the approval commands for /help.
func (b *Broker) Commands() []core.CommandHelp {
	return []core.CommandHelp{
		{Name: string(VerbApprove), Args: "<token> [always | for 30m]", Summary: "run a held action; always also allows exactly that call from now on, for 30m (1m to 24h) identical calls in its conversation until then"},
		{Name: string(VerbDeny), Args: "<token> [reason]", Summary: "refuse a held action; the reason goes to the model"},
		{Name: string(VerbPending), Summary: "list the approval requests waiting for a decision"},
		{Name: string(VerbShow), Args: "<token>", Summary: "print a request's action in full"},
		{Name: string(VerbRules), Summary: "list the standing allows"},
		{Name: string(VerbUnallow), Args: "<number>", Summary: "remove a standing allow (numbers from /rules)"},
		{Name: string(VerbAudit), Args: "[rows | token]", Summary: "this conversation's latest audit rows (10 unless said), or every row of one request"},
	}
}

// maxStatusTokens bounds the requests named on the /status line.
const maxStatusTokens = 5

// StatusLines says, for /status, who the approvers are (by person: the
// identities of one person joined by " = ", persons by "; "), which
// approvals of conv wait for a decision and how many of its approved
// actions are running. /status answers people, never the LLM, so tokens
// may appear.
func (b *Broker) StatusLines(ctx context.Context, conv core.Conversation) []string {
	list, err := b.Pending(ctx)
	if err != nil {
		b.log.Error().Err(err).Str("conv", conv.Key()).Msg("hitl: status: could not list pending approvals")
		return []string{"Pending approvals here: unknown (storage error)."}
	}
	var here []string
	for _, a := range list {
		if a.Conv.Key() == conv.Key() {
			here = append(here, a.Token+" "+a.Call.Name)
		}
	}
	lines := []string{approversLine(b.People())}
	switch n := len(here); {
	case n == 0:
		lines = append(lines, "No pending approvals here.")
	case n > maxStatusTokens:
		lines = append(lines, fmt.Sprintf("Pending approvals here: %d (%s, …)", n, strings.Join(here[:maxStatusTokens], ", ")))
	default:
		lines = append(lines, fmt.Sprintf("Pending approvals here: %d (%s)", n, strings.Join(here, ", ")))
	}
	if n := b.runningIn(conv); n > 0 {
		lines = append(lines, fmt.Sprintf("Approved actions running here: %d (/cancel stops them).", n))
	}
	return append(lines, b.runningElsewhere(ctx, conv)...)
}

// runningElsewhere says, with a SharedStore, how many of conv's approved
// actions other instances run, and which (none without one).
func (b *Broker) runningElsewhere(ctx context.Context, conv core.Conversation) []string {
	if _, ok := b.sharedStore(); !ok {
		return nil
	}
	list, err := b.o.Store.Approvals(ctx, record.StatusExecuting)
	if err != nil {
		b.log.Error().Err(err).Str("conv", conv.Key()).Msg("hitl: status: could not list running approvals")
		return []string{"Approved actions running on other instances: unknown (storage error)."}
	}
	var where []string
	n := 0
	for _, a := range list {
		if a.Conv.Key() != conv.Key() || a.Instance == b.o.Instance {
			continue
		}
		n++
		if name := textutil.GraphicLine(textutil.Shorten(a.Instance, 64)); !slices.Contains(where, name) && len(where) < maxStatusTokens {
			where = append(where, name)
		}
	}
	if n == 0 {
		return nil
	}
	return []string{fmt.Sprintf("Approved actions running here on other instances: %d (on %s; /cancel stops only this instance's).", n, strings.Join(where, ", "))}
}

// approversLine is /status's line naming the approvers by person.
func approversLine(people [][]core.Identity) string {
	persons := make([]string, len(people))
	for i, ids := range people {
		names := make([]string, len(ids))
		for j, id := range ids {
			names[j] = string(id)
		}
		persons[i] = strings.Join(names, " = ")
	}
	return "Approvers: " + strings.Join(persons, "; ")
}
