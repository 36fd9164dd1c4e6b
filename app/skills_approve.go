package app

import (
	"context"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/skills"
)

// skillsGateway is the gateway of the conversation a skill's approval
// request belongs to ("skills:<name>"): no platform, no model. The
// request goes to the approvers where held calls' requests go
// (hitl.notify and the approvers' conversations); what the broker would
// send to that conversation itself, or submit to its model, is dropped.
const skillsGateway = "skills"

// skillRequestRule names why a skill's enabling is held.
const skillRequestRule = "skills: a skill is offered only once its exact content is approved"

// askSkill asks the approvers to enable sk as it is: a held enable_skill
// call through the broker (/approve TOKEN, four-eyes, files attached when
// the request is shortened), unless a request for this very content is
// pending already (another instance's, or before a restart).
func (a *App) askSkill(ctx context.Context, sk *skills.Skill) {
	if a.broker == nil {
		return
	}
	conv := core.Conversation{Gateway: skillsGateway, Chat: sk.Name}
	if pending, err := a.broker.Pending(ctx); err == nil {
		for _, p := range pending {
			if _, d := skills.EnableDigest(p.Call.Args); p.Call.Name == skills.EnableTool && p.Conv == conv && d == sk.Digest {
				return
			}
		}
	}
	held := core.Held{Conv: conv, From: core.Identity(skillsGateway + ":" + sk.Name), Call: skills.EnableCall(sk),
		Rule: skillRequestRule, Reason: skills.Request(sk)}
	if _, err := a.broker.Hold(ctx, held); err != nil {
		a.log.Error().Err(err).Str("skill", sk.Name).Msg("skills: approval request not made")
	}
}

// skillDispatch is the engine as the broker sees it, with the skills'
// approval requests handled: an approved enable_skill call enables the
// skill (its digest checked again), and the requests' own conversation
// ("skills:<name>") receives nothing.
type skillDispatch struct {
	*core.Engine
	app *App
}

func isSkillConv(c core.Conversation) bool { return c.Gateway == skillsGateway }

// Act implements core.Dispatcher.
func (d skillDispatch) Act(ctx context.Context, act core.Action) (core.Result, error) {
	if act.Kind == core.ActionTool && act.Call.Name == skills.EnableTool && isSkillConv(act.Conv) && d.app.skills != nil {
		by := core.Identity("hitl")
		if ap, err := d.app.store.Approval(ctx, act.Approval); err == nil && ap.ResolvedBy != "" {
			by = ap.ResolvedBy
		}
		out, err := d.app.skills.RunEnable(ctx, act.Call.Args, by)
		if err != nil {
			return core.Result{Output: "error: " + err.Error(), Failed: true}, nil
		}
		return core.Result{Output: out}, nil
	}
	if act.Kind == core.ActionReply && isSkillConv(act.Conv) {
		return core.Result{}, nil
	}
	return d.Engine.Act(ctx, act)
}

// Rejudge implements hitl.Rejudger: enabling a skill is an approver's
// decision alone; the policy judges what the skill's scripts do when the
// model runs them.
func (d skillDispatch) Rejudge(ctx context.Context, act core.Action) core.Decision {
	if act.Call.Name == skills.EnableTool && isSkillConv(act.Conv) {
		return core.Decision{Verdict: core.NeedsApproval, Rule: skillRequestRule}
	}
	return d.Engine.Rejudge(ctx, act)
}

// Prompt implements core.Dispatcher.
func (d skillDispatch) Prompt(ctx context.Context, conv core.Conversation, text string, p core.ApprovalPrompt) error {
	if isSkillConv(conv) {
		return nil
	}
	return d.Engine.Prompt(ctx, conv, text, p)
}

// SendPromptFile implements core.PromptFiles.
func (d skillDispatch) SendPromptFile(ctx context.Context, conv core.Conversation, f core.OutgoingFile) error {
	if isSkillConv(conv) {
		return nil
	}
	return d.Engine.SendPromptFile(ctx, conv, f)
}

// Resolved implements core.Dispatcher.
func (d skillDispatch) Resolved(ctx context.Context, conv core.Conversation, r core.ApprovalResolution) {
	if !isSkillConv(conv) {
		d.Engine.Resolved(ctx, conv, r)
	}
}

// Submit implements core.Dispatcher: an outcome for a skill's request
// starts no turn.
func (d skillDispatch) Submit(ctx context.Context, s core.Signal) error {
	if isSkillConv(s.Conv) {
		if s.Done != nil {
			s.Done()
		}
		return nil
	}
	return d.Engine.Submit(ctx, s)
}

// brokerDispatcher is what the broker dispatches through: the engine,
// with the skills' requests handled when there are skills.
func (a *App) brokerDispatcher() brokerEngine {
	if a.skills == nil {
		return a.engine
	}
	return skillDispatch{Engine: a.engine, app: a}
}
