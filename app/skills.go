package app

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/skills"
)

// skillsWatch is how often a running instance looks at the skills
// folders for files changed (a turn also looks, when its look is older
// than skills.DefaultRefresh).
const skillsWatch = time.Minute

// buildSkills makes the skills catalog over skills.dirs and registers its
// tools: skill (read-only; offered only in a conversation with an enabled
// skill) and write_skill (held by skills.Gate whatever the policy says).
// Without skills.dirs there is no catalog and neither tool.
func (a *App) buildSkills(cfg *config.Config, log zerolog.Logger, now func() time.Time) error {
	if len(cfg.Skills.Dirs) == 0 {
		return nil
	}
	a.skills = skills.NewCatalog(skills.Options{
		Dirs: cfg.Skills.Dirs, MaxListed: cfg.Skills.MaxListed, Store: a.store, Profiles: a.profiles,
		Audit: stampAudit(a.store, a.instance),
		Ask:   a.askSkill, Now: now, Log: log,
	})
	if err := a.tools.Register(a.skills.Tool()); err != nil {
		return err
	}
	return a.tools.Register(a.skills.WriteTool())
}

// skillGates are the gates skills add: write_skill always held.
func (a *App) skillGates() []core.Gate {
	if a.skills == nil {
		return nil
	}
	return []core.Gate{skills.Gate{}}
}

// skillLister is the engine's SkillLister: nil without skills, so that
// the request does not grow.
func (a *App) skillLister() core.SkillLister {
	if a.skills == nil {
		return nil
	}
	return a.skills
}

// watchSkills looks at the skills folders at start and then every
// skillsWatch until ctx ends: a skill found new or changed is pending,
// and its approval request is sent.
func (a *App) watchSkills(ctx context.Context) error {
	t := time.NewTicker(skillsWatch)
	defer t.Stop()
	for {
		if err := a.skills.Refresh(ctx); err != nil {
			a.log.Warn().Err(err).Msg("skills: look at the skills failed")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// reloadSkills looks at the skills again on a reload.
func (a *App) reloadSkills(ctx context.Context) {
	if a.skills == nil {
		return
	}
	if err := a.skills.Refresh(ctx); err != nil {
		a.log.Warn().Err(err).Msg("skills: look at the skills on reload failed")
	}
}
