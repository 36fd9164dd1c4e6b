package skills

import (
	"context"
	"fmt"
	"strings"

	"github.com/gatehouse-bot/gatehouse/core"
)

var _ core.SkillCommander = (*Catalog)(nil)

// SkillCommand answers /skills and /skill NAME enable [DIGEST] | disable.
// Anyone allowed sees the skills the conversation can use; approvers also
// see pending and disabled ones with their short digest, and alone may
// enable or disable.
func (c *Catalog) SkillCommand(ctx context.Context, s core.Signal, name, args string, approver bool) string {
	if name == "skills" {
		return c.listText(ctx, s.Conv, approver)
	}
	f := strings.Fields(args)
	if len(f) < 2 || (f[1] != "enable" && f[1] != "disable") || len(f) > 3 || (f[1] == "disable" && len(f) == 3) {
		return "Usage: /skill <name> enable [digest] | /skill <name> disable"
	}
	if !approver {
		return "Only an approver may enable or disable a skill."
	}
	skill := f[0]
	if f[1] == "disable" {
		if err := c.Disable(ctx, skill, s.From); err != nil {
			return "Not disabled: " + err.Error()
		}
		c.o.Log.Info().Str("skill", skill).Str("by", string(s.From)).Msg("skills: skill disabled")
		return fmt.Sprintf("Skill %s disabled: it is no longer offered.", textShown(skill, MaxName+8))
	}
	want := ""
	if len(f) == 3 {
		want = f[2]
	}
	sk, err := c.Approve(ctx, skill, want, s.From)
	if err != nil {
		return "Not enabled: " + err.Error()
	}
	c.o.Log.Info().Str("skill", sk.Name).Str("digest", sk.Short()).Str("by", string(s.From)).Msg("skills: skill enabled")
	return fmt.Sprintf("Skill %s enabled at digest %s (%d files); a later edit makes it pending again.", sk.Name, sk.Short(), len(sk.Files))
}

// listText is /skills's answer.
func (c *Catalog) listText(ctx context.Context, conv core.Conversation, approver bool) string {
	offered := c.Offered(ctx, conv)
	lines := []string{"Skills here:"}
	if len(offered) == 0 {
		lines[0] = "No skills here."
	}
	for _, sk := range offered {
		lines = append(lines, "- "+sk.Name+": "+textShown(oneLine(sk.Description), 200))
	}
	if !approver {
		return strings.Join(lines, "\n")
	}
	entries, probs := c.List(ctx)
	for _, e := range entries {
		if e.Status != Enabled {
			lines = append(lines, fmt.Sprintf("- %s (%s, digest %s, %d files)", e.Skill.Name, e.Status, e.Skill.Short(), len(e.Skill.Files)))
		}
	}
	if n := countRefused(probs); n > 0 {
		lines = append(lines, fmt.Sprintf("%d skill folders not loaded (`bot doctor` says why).", n))
	}
	return strings.Join(lines, "\n")
}

func countRefused(probs []Problem) int {
	seen := map[string]bool{}
	for _, p := range probs {
		if !p.Warning {
			seen[p.Dir+"/"+p.Skill] = true
		}
	}
	return len(seen)
}
