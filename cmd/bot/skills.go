package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app/storetable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/skills"
	"github.com/gatehouse-bot/gatehouse/store"
)

// skillsUsage is `bot help`'s part on `bot skills`.
const skillsUsage = `  skills list         the skills in skills.dirs: enabled, pending or
                      disabled, with their digests; why a folder was not loaded
      -config FILE    configuration file (default config.yaml)
  skills approve      NAME [DIGEST]: enable the skill's content as it is now
                      (audited as local:operator); with SQLite, only while
                      the bot is stopped (in chat: /skill NAME enable)
      -config FILE    configuration file (default config.yaml)
`

// localOperator is who `bot skills approve` records: the operator who
// owns the files, at the shell.
const localOperator core.Identity = "local:operator"

// skillsCmd runs `bot skills list` and `bot skills approve NAME [DIGEST]`.
func skillsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "list" && args[0] != "approve") {
		fmt.Fprintln(stderr, "usage: bot skills list | bot skills approve NAME [DIGEST] [-config FILE]")
		return exitConfig
	}
	sub := args[0]
	fs, path := newFlags("skills "+sub, stderr)
	if code, done := parseFlags(fs, args[1:]); done {
		return code
	}
	cfg, _, code := loadConfig(*path, stderr)
	if cfg == nil {
		return code
	}
	if len(cfg.Skills.Dirs) == 0 {
		fmt.Fprintln(stderr, "bot skills: no skills.dirs in the configuration")
		return exitConfig
	}
	if sub == "list" {
		return skillsList(ctx, cfg, stdout)
	}
	rest := fs.Args()
	if len(rest) < 1 || len(rest) > 2 {
		fmt.Fprintln(stderr, "usage: bot skills approve NAME [DIGEST] [-config FILE]")
		return exitConfig
	}
	want := ""
	if len(rest) == 2 {
		want = rest[1]
	}
	return skillsApprove(ctx, cfg, rest[0], want, stdout, stderr)
}

// skillsList prints every skill with its status and the problems of those
// not loaded; the store is read only (beside a running bot).
func skillsList(ctx context.Context, cfg *config.Config, stdout io.Writer) int {
	st, closeStore := skillStates(ctx, cfg)
	defer closeStore()
	cat := skills.NewCatalog(skills.Options{Dirs: cfg.Skills.Dirs, Store: st, Log: zerolog.Nop()})
	entries, probs := cat.List(ctx)
	for _, e := range entries {
		fmt.Fprintf(stdout, "%s\t%s\tdigest %s\t%d files\t%s\n", e.Skill.Name, e.Status, e.Skill.Short(), len(e.Skill.Files),
			textutil.Visible(textutil.Shorten(e.Skill.Description, 80)))
	}
	for _, p := range probs {
		fmt.Fprintf(stdout, "%s\n", textutil.Visible(p.String()))
	}
	if len(entries) == 0 && len(probs) == 0 {
		fmt.Fprintln(stdout, "no skills in "+strings.Join(cfg.Skills.Dirs, ", "))
	}
	return exitOK
}

// skillStates opens the store read only for the skills' states; nil when
// it is not there yet or older (every skill is then pending).
func skillStates(ctx context.Context, cfg *config.Config) (skills.Store, func()) {
	db, err := storetable.OpenReadOnly(ctx, cfg)
	if err != nil {
		return nil, func() {}
	}
	return db, func() { db.Close() }
}

// skillsApprove enables the skill name's content as it is now, recorded
// and audited as the local operator.
func skillsApprove(ctx context.Context, cfg *config.Config, name, want string, stdout, stderr io.Writer) int {
	db, err := storetable.Open(ctx, cfg, nil)
	if errors.Is(err, store.ErrLocked) {
		fmt.Fprintf(stderr, "bot skills approve: the running bot holds the database: enable it in chat (/skill %s enable), or stop the bot first\n", name)
		return exitFail
	}
	if err != nil {
		fmt.Fprintf(stderr, "bot skills approve: %v\n", err)
		return exitFail
	}
	defer db.Close()
	cat := skills.NewCatalog(skills.Options{Dirs: cfg.Skills.Dirs, Store: db, Audit: db, Log: zerolog.Nop()})
	sk, err := cat.Approve(ctx, name, want, localOperator)
	if err != nil {
		fmt.Fprintf(stderr, "bot skills approve: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "skill %s enabled at digest %s (%d files), as %s; a later edit makes it pending again\n",
		sk.Name, sk.Short(), len(sk.Files), localOperator)
	return exitOK
}

// agentToolNames maps the tool names skills written for other agents put
// in allowed-tools to gatehouse's tools.
var agentToolNames = map[string]string{
	"bash": "shell", "read": "read_file", "write": "write_file", "edit": "write_file",
	"webfetch": "http_get", "glob": "list_dir", "ls": "list_dir",
}

// doctorSkills loads the skills as the bot would: each one that is not
// loaded is a warning naming the skill, the field and the rule; each
// loaded one shows its status and, beside its allowed-tools, what the
// policy decides of those tools (allowed-tools widens nothing).
func doctorSkills(ctx context.Context, r *report, cfg *config.Config, sec *secrets.Set) {
	if len(cfg.Skills.Dirs) == 0 {
		return
	}
	st, closeStore := skillStates(ctx, cfg)
	defer closeStore()
	cat := skills.NewCatalog(skills.Options{Dirs: cfg.Skills.Dirs, Store: st, Log: zerolog.Nop()})
	entries, probs := cat.List(ctx)
	r.line("skills", "%d loaded from %s", len(entries), strings.Join(cfg.Skills.Dirs, ", "))
	if len(cfg.HITL.Notify) == 0 {
		r.warning("skills", "hitl.notify is empty: a new or changed skill's approval request reaches nobody (approvers see it in /skills and enable it with /skill NAME enable)")
	}
	for _, e := range entries {
		r.line("skills", "%s: %s, %d files, digest %s", e.Skill.Name, e.Status, len(e.Skill.Files), e.Skill.Short())
		if e.Skill.AllowedTools != "" {
			r.line("skills", "%s: allowed-tools %s widens nothing; the policy decides: %s", e.Skill.Name,
				textutil.Visible(fmt.Sprintf("%q", e.Skill.AllowedTools)), allowedToolsPolicy(ctx, cfg, sec, e.Skill.AllowedTools))
		}
	}
	for _, p := range probs {
		r.warning("skills", "%s", textutil.Visible(p.String()))
	}
}

// allowedToolsPolicy says what the policy decides of each tool an
// allowed-tools field names.
func allowedToolsPolicy(ctx context.Context, cfg *config.Config, sec *secrets.Set, field string) string {
	j, err := newJudge(cfg, sec)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	defer j.cleanup()
	var out []string
	seen := map[string]bool{}
	for _, tok := range strings.Fields(field) {
		name, _, _ := strings.Cut(tok, "(")
		tool := strings.ToLower(name)
		if mapped, ok := agentToolNames[tool]; ok {
			tool = mapped
		}
		if seen[tool] {
			continue
		}
		seen[tool] = true
		if _, known := j.catalog.ReadOnly(tool); !known {
			out = append(out, textutil.Visible(name)+": no such tool here")
			continue
		}
		d := j.gate.Judge(ctx, core.Action{Kind: core.ActionTool, Call: llm.ToolCall{Name: tool, Args: "{}"}}).Decision
		out = append(out, fmt.Sprintf("%s %s (%s)", tool, d.Verdict, d.Rule))
	}
	return strings.Join(out, "; ")
}
