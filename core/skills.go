package core

import (
	"context"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// SkillTool names the built-in read-only tool that loads a skill's
// instructions. It is offered only in a conversation that may use at
// least one enabled skill: elsewhere the request does not grow.
const SkillTool = "skill"

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
