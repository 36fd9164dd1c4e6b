package core

import (
	"context"
	"slices"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// SkillTool names the built-in read-only tool that loads a skill's
// instructions. It is offered only in a conversation that may use at
// least one enabled skill: elsewhere the request does not grow.
const SkillTool = "skill"

// The calls that change which skills the model is offered: enabling a
// skill's exact content (a request the skills catalog raises, never a
// tool of the model) and write_skill (the model's proposal of a skill).
const (
	EnableSkillTool = "enable_skill"
	WriteSkillTool  = "write_skill"
)

// ApprovedOnce reports whether an approval of a call of tool covers that
// call once and nothing more: a person approves exactly the content shown
// each time. No standing allow ("/approve TOKEN always") nor grant
// ("/approve TOKEN for 30m") is added for it or lets one through, and its
// request offers neither.
func ApprovedOnce(tool string) bool { return tool == EnableSkillTool || tool == WriteSkillTool }

// SkillLister lists the skills a conversation may use for its system
// prompt (the skills catalog implements it): name and description only,
// bounded; "" when it may use none.
type SkillLister interface {
	SkillPrompt(ctx context.Context, conv Conversation) string
}

// SkillCommander is implemented by a SkillLister that answers /skills
// and /skill: name is the command, args what follows it, approver
// whether the sender may approve.
type SkillCommander interface {
	SkillCommand(ctx context.Context, s Signal, name, args string, approver bool) string
}

// ToolHolder is implemented by a gate that holds every call of some tools
// for approval whatever the policy's rules say (skills' write_skill):
// /tools says so.
type ToolHolder interface {
	Holds(tool string) bool
}

// alwaysHeld reports whether a gate among gates holds every call of tool.
func alwaysHeld(gates []Gate, tool string) bool {
	for _, g := range gates {
		if h, ok := g.(ToolHolder); ok && h.Holds(tool) {
			return true
		}
	}
	return false
}

// skillCommands are listed by /help when skills are configured.
var skillCommands = []CommandHelp{
	{Name: "skills", Summary: "the skills this conversation can use (approvers also see pending and disabled ones)"},
	{Name: "skill", Args: "<name> enable [digest] | disable", Summary: "approvers: enable a skill's exact content, or stop offering it"},
}

// withSkills adds the list of the conversation's skills to prompt and
// keeps the skill tool among specs only when there is one to list.
func (t *turnState) withSkills(ctx context.Context, prompt string, specs []llm.ToolSpec) (string, []llm.ToolSpec) {
	if t.cfg.Skills != nil {
		if list := t.cfg.Skills.SkillPrompt(ctx, t.sig.Conv); list != "" {
			return prompt + "\n\n" + list, specs
		}
	}
	for i, s := range specs {
		if s.Name == SkillTool {
			out := make([]llm.ToolSpec, 0, len(specs)-1)
			return prompt, append(append(out, specs[:i]...), specs[i+1:]...)
		}
	}
	return prompt, specs
}

// skillOffered returns specs without the skill tool when conv is not
// offered it (no enabled skill it may use), as its turns' requests are
// made (withSkills): /tools lists what the model is offered there.
func (e *Engine) skillOffered(ctx context.Context, conv Conversation, specs []llm.ToolSpec) []llm.ToolSpec {
	if !slices.ContainsFunc(specs, func(s llm.ToolSpec) bool { return s.Name == SkillTool }) {
		return specs
	}
	if e.cfg.Skills != nil && e.cfg.Skills.SkillPrompt(ctx, conv) != "" {
		return specs
	}
	return slices.DeleteFunc(slices.Clone(specs), func(s llm.ToolSpec) bool { return s.Name == SkillTool })
}

// skillCommand answers /skills and /skill through the SkillCommander;
// false when there is none.
func (e *Engine) skillCommand(ctx context.Context, s Signal, name string) (string, bool) {
	sc, ok := e.cfg.Skills.(SkillCommander)
	if !ok {
		return "", false
	}
	_, rest := firstWord(s.Text)
	return sc.SkillCommand(ctx, s, name, rest, e.cfg.Auth.IsApprover(s.From)), true
}
