package core

import (
	"context"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// ToolAudit records every tool call the Engine ran on a rule's allow (the
// hitl broker records the approved ones).
type ToolAudit interface {
	AuditTool(ctx context.Context, a Action, rule string, res Result)
}

// runCalls gates and runs each proposed call in order and returns one tool
// message per call, so the history stays a valid sequence. allFailed is true
// when no call succeeded. Once ctx ends (/cancel, shutdown), the calls left
// are neither run nor held, only answered.
func (t *turnState) runCalls(ctx context.Context, calls []llm.ToolCall) (msgs []llm.Message, allFailed bool) {
	msgs = make([]llm.Message, 0, len(calls))
	allFailed = true
	rejected := 0
	for i, call := range calls {
		if i >= t.cfg.MaxToolCalls {
			// Neither run nor held, but answered: the API needs a result
			// for every call id.
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Content: fmt.Sprintf(
				"not run: your response proposed %d tool calls and at most %d are run from one response (llm.max_tool_calls); "+
					"propose the rest again, fewer at a time, if they are still needed", len(calls), t.cfg.MaxToolCalls)})
			continue
		}
		if ctx.Err() != nil {
			// A tool need not look at its context: a call after the one
			// /cancel stopped would otherwise still run, or be held.
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: call.ID,
				Content: fmt.Sprintf("not run: the turn was stopped before this call (%v)", context.Cause(ctx))})
			continue
		}
		out, failed, denied := t.runCall(ctx, call)
		if !failed || denied { // refusals are counted as rejections, not failures
			allFailed = false
		}
		if denied {
			rejected++
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Content: t.cfg.Redact(out)})
	}
	if len(calls) > t.cfg.MaxToolCalls {
		t.log.Warn().Int("calls", len(calls)).Int("max_tool_calls", t.cfg.MaxToolCalls).Msg("tool calls over the limit not run")
	}
	if rejected == min(len(calls), t.cfg.MaxToolCalls) {
		t.rejections++
	} else {
		t.rejections = 0
	}
	return msgs, allFailed
}

// runCall decides one call through the gates and acts on the decision.
func (t *turnState) runCall(ctx context.Context, call llm.ToolCall) (out string, failed, denied bool) {
	// A key given twice is refused first, on the arguments as the model
	// wrote them (CanonicalArgs leaves them so): a rule would judge one
	// copy and the tool could act on the other.
	err := RepeatedKey(call.Args)
	if _, known := t.cfg.Tools.ReadOnly(call.Name); err == nil && t.profile != nil && (!known || !t.profile.Offers(call.Name)) {
		// Not offered to this conversation's model: to it, no such tool.
		// An unknown tool is worded the same way, naming only what the
		// profile offers (the registry's error would name every tool).
		err = t.profile.notOffered(call.Name, t.cfg.Tools.Specs())
	}
	if err == nil {
		err = t.cfg.Tools.CheckArgs(ctx, call.Name, call.Args)
	}
	if err != nil {
		// The gates never see a call whose arguments do not fit the
		// tool's schema: a rule could be dodged by a key's spelling.
		t.log.Info().Str("tool", call.Name).Err(err).Msg("tool call arguments refused")
		t.cfg.Metrics.ToolCall(t.toolLabel(call.Name), "invalid")
		return "error: " + err.Error(), true, false
	}
	a := Action{Kind: ActionTool, Conv: t.sig.Conv, From: t.sig.From, Call: call}
	d := CheckGates(ctx, t.cfg.Gates, a)
	log := t.log.With().Str("tool", call.Name).Str("rule", d.Rule).Stringer("decision", d.Verdict).Logger()
	t.cfg.Metrics.ToolCall(t.toolLabel(call.Name), d.Verdict.String())
	switch d.Verdict {
	case Deny:
		log.Info().Msg("tool call denied")
		if t.rejections+1 >= maxRejections {
			return "refused: " + d.Reason + ". Stop proposing this; tell the user it is not allowed.", true, true
		}
		return "refused: " + d.Reason, true, true
	case NeedsApproval:
		if t.cfg.Holder == nil {
			log.Info().Msg("tool call needs approval, but approvals are not configured")
			return "refused: this action needs a human's approval and approvals are not configured; tell the user", true, true
		}
		held := Held{Conv: t.sig.Conv, From: t.sig.From, Call: call, Rule: d.Rule, Reason: d.Reason, Again: t.sig.journal.takenOver()}
		if ro, _ := t.cfg.Tools.ReadOnly(call.Name); !ro && t.cfg.Undo != nil {
			held.Note = t.cfg.Undo.Preflight(ctx, a)
		}
		text, err := t.cfg.Holder.Hold(ctx, held)
		if err != nil {
			log.Error().Err(err).Msg("approval request failed")
			return "error: the approval request could not be created; tell the user", true, false
		}
		log.Info().Msg("tool call held for approval")
		return text, false, false
	}
	if err := t.sig.journal.record(ctx, StageTool); err != nil {
		// Not run: the instance that takes the message over decides.
		log.Warn().Err(err).Msg("tool call not run: its turn's stage could not be recorded")
		if t.rt != nil {
			t.rt.cancel(err)
		}
		return "not run: " + err.Error(), true, false
	}
	t.counters.toolCalls.Add(1)
	log.Info().Msg("act")
	began := time.Now()
	res, err := t.Act(ctx, a)
	t.cfg.Metrics.ToolRun(call.Name, time.Since(began))
	if err != nil {
		log.Error().Err(err).Msg("tool run failed")
		res = Result{Output: fmt.Sprintf("error: %v", err), Failed: true}
	}
	if t.cfg.ToolAudit != nil {
		// The call ran: audit it even when the turn is being cancelled.
		t.cfg.ToolAudit.AuditTool(context.WithoutCancel(ctx), a, d.Rule, res)
	}
	return res.Output, res.Failed, false
}
