package main

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/skills"
)

// registerSkillTools registers, when skills.dirs is set, the skills' tools
// as the running bot does (skill, read-only; write_skill), for `bot
// policy` to judge them; it reads no skill.
func registerSkillTools(cfg *config.Config, reg *tools.Registry) error {
	if len(cfg.Skills.Dirs) == 0 {
		return nil
	}
	cat := skills.NewCatalog(skills.Options{Dirs: cfg.Skills.Dirs, Log: zerolog.Nop()})
	if err := reg.Register(cat.Tool()); err != nil {
		return err
	}
	return reg.Register(cat.WriteTool())
}

// judgeSkills judges a as the running bot with skills does: enabling a
// skill is held for a person whatever the rules (the policy does not
// judge it), and write_skill, unless the policy denies it, is held by
// skills.Gate, named as the rule (a rule, a standing allow or a grant
// that allows it does not let it through); any other call as the policy
// judges it.
func (j *judge) judgeSkills(ctx context.Context, a core.Action) core.Judgement {
	if a.Call.Name == core.EnableSkillTool {
		d := core.Decision{Verdict: core.NeedsApproval, Rule: skills.EnableRule}
		return core.Judgement{Decision: d, Policy: d}
	}
	jd := j.gate.Judge(ctx, a)
	if jd.Decision.Verdict == core.Deny {
		return jd
	}
	if d := (skills.Gate{}).Check(ctx, a); d.Verdict == core.NeedsApproval {
		jd.Decision, jd.Policy, jd.Standing, jd.Grant = d, d, false, ""
	}
	return jd
}
