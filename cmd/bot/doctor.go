package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/app/storetable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/supervise"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store"
)

// doctor checks the configuration and says, per component, what is
// configured, what is missing and what would be used. What stops the bot
// from running as configured is a problem; what it runs with but should
// be looked at (an MCP server that does not start, an LLM provider
// --online cannot reach) is a warning. Both are listed again, apart, at
// the end; doctor exits 0 unless there is a problem.
func doctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, path := newFlags("doctor", stderr)
	online := fs.Bool("online", false, "also contact every configured service (LLM providers, gateways) and report each with its latency")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	cfg, sec, code := loadConfig(*path, stderr)
	if cfg == nil {
		return code
	}
	r := &report{w: stdout}
	r.line("config", "%s: valid", *path)
	doctorLLM(r, cfg)
	doctorBudget(r, cfg)
	doctorGateways(r, cfg)
	doctorHITL(r, cfg)
	doctorTools(r, cfg)
	doctorAttachments(r, cfg)
	mcpTools, mcpDown := doctorMCP(ctx, r, cfg, sec)
	doctorProfiles(r, cfg, sec, mcpTools, mcpDown)
	doctorSchedules(r, cfg, time.Now())
	doctorSkills(ctx, r, cfg, sec)
	doctorStore(ctx, r, cfg, sec.Redact)
	if cfg.HTTP.Listen != "" {
		r.line("http", "/healthz /readyz /metrics on %s", cfg.HTTP.Listen)
	}
	if *online {
		doctorOnline(ctx, r, cfg, sec)
	}
	return r.finish()
}

// report prints doctor's lines: a component, then what it found. It keeps
// the problems and warnings for the summary.
type report struct {
	w        io.Writer
	last     string
	problems []finding
	warnings []finding
}

// finding is one problem or warning: its component and what was found.
type finding struct{ component, text string }

func (r *report) line(component, format string, args ...any) {
	label := component
	if component == r.last {
		label = ""
	}
	r.last = component
	fmt.Fprintf(r.w, "%-9s %s\n", label, fmt.Sprintf(format, args...))
}

// problem reports what stops the bot from running as configured.
func (r *report) problem(component, format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	r.problems = append(r.problems, finding{component, text})
	r.line(component, "PROBLEM: %s", text)
}

// warning reports what the bot runs with but the user should know of.
func (r *report) warning(component, format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	r.warnings = append(r.warnings, finding{component, text})
	r.line(component, "warning: %s", text)
}

// finish prints the problems and the warnings, each list apart, and the
// verdict, and returns doctor's exit code: exitFail when there is a
// problem, exitOK otherwise (warnings included).
func (r *report) finish() int {
	list := func(head string, fs []finding) {
		if len(fs) == 0 {
			return
		}
		fmt.Fprintf(r.w, "%s\n", head)
		for _, f := range fs {
			fmt.Fprintf(r.w, "  %s: %s\n", f.component, f.text)
		}
	}
	fmt.Fprintln(r.w)
	list("problems (the bot cannot run as configured):", r.problems)
	list("warnings (the bot runs, but look at these):", r.warnings)
	switch {
	case len(r.problems) > 0:
		fmt.Fprintf(r.w, "\n%d problem(s): the bot cannot run as configured.\n", len(r.problems))
		return exitFail
	case len(r.warnings) > 0:
		fmt.Fprintf(r.w, "\nready: `bot` will run as shown, with %d warning(s) above.\n", len(r.warnings))
	default:
		fmt.Fprintln(r.w, "ready: `bot` will run as shown.")
	}
	return exitOK
}

func doctorLLM(r *report, cfg *config.Config) {
	used := 0
	for i, p := range cfg.LLM.Providers {
		if why := app.ProviderSkipped(p); why != "" {
			r.line("llm", "%d. %s: skipped (%s)", i+1, p.Name, why)
			continue
		}
		used++
		key := "api_key set"
		switch {
		case p.APIKey != "":
		case config.URLCredential(p.BaseURL) != "":
			key = "credentials in base_url"
		default:
			key = "no api_key (local server)"
		}
		if p.Vision {
			key += ", vision"
		}
		r.line("llm", "%d. %s: %s, model %s, %s", i+1, p.Name, config.RedactURL(p.BaseURL), p.Model, key)
	}
	if used == 0 {
		r.line("llm", "using the offline demo model (a few intents only); set OPENAI_API_KEY or configure llm.providers")
	}
	r.line("llm", "max_steps %d, timeout %s, history %d messages", cfg.LLM.MaxSteps, cfg.LLM.Timeout, cfg.LLM.History)
}

// doctorBudget lists the daily caps (budget.*).
func doctorBudget(r *report, cfg *config.Config) {
	b := cfg.Budget
	demo := ""
	if !usesProvider(cfg) {
		demo = "; the offline demo model's answers count no tokens"
	}
	if b.ConversationDailyTokens <= 0 && b.DailyTokens <= 0 && b.DailyUSD <= 0 {
		r.line("budget", "no daily caps (budget.conversation_daily_tokens, daily_tokens, daily_usd)%s", demo)
		return
	}
	tokens := func(n int) string {
		if n <= 0 {
			return "unlimited"
		}
		return fmt.Sprintf("%d tokens", n)
	}
	usd := "unlimited"
	if b.DailyUSD > 0 {
		usd = fmt.Sprintf("$%.2f", b.DailyUSD)
	}
	r.line("budget", "daily caps (UTC days): conversation_daily_tokens %s, daily_tokens %s, daily_usd %s%s",
		tokens(b.ConversationDailyTokens), tokens(b.DailyTokens), usd, demo)
}

// usesProvider reports whether an LLM provider is used rather than the
// offline demo model.
func usesProvider(cfg *config.Config) bool {
	for _, p := range cfg.LLM.Providers {
		if app.ProviderSkipped(p) == "" {
			return true
		}
	}
	return false
}

// doctorAttachments says where received files go and what becomes of
// images and voice.
func doctorAttachments(r *report, cfg *config.Config) {
	a := cfg.Attachments
	r.line("files", "received files up to %s saved in %s", a.MaxBytes, filepath.Join(cfg.Tools.Workspace, a.Dir))
	vision := ""
	for _, p := range cfg.LLM.Providers {
		if p.Vision && app.ProviderSkipped(p) == "" {
			vision = p.Name
			break
		}
	}
	if vision == "" || a.MaxImages == 0 {
		r.line("files", "images: the model is told their path (no provider with vision: true in use)")
	} else {
		r.line("files", "images: up to %d a message sent to providers with vision (%s first)", a.MaxImages, vision)
	}
	t := cfg.LLM.Transcribe
	switch {
	case t.Provider == "":
		r.line("files", "voice and audio: saved as files (llm.transcribe not set)")
	default:
		for _, p := range cfg.LLM.Providers {
			if p.Name != t.Provider {
				continue
			}
			if why := app.ProviderSkipped(p); why != "" {
				r.line("files", "voice and audio: saved as files (llm.transcribe's provider %s is skipped: %s)", p.Name, why)
			} else {
				r.line("files", "voice and audio: transcribed by %s, model %s", p.Name, t.Model)
			}
		}
	}
}

// doctorGateways prints what each gateway of the gateway table says about
// itself, offline.
func doctorGateways(r *report, cfg *config.Config) {
	sections, err := gatewaytable.Sections(cfg.Gateways)
	if err != nil {
		r.problem("gateways", "%v", err)
		return
	}
	n := 0
	for _, s := range sections {
		st := s.Section.Doctor()
		if st.Runs {
			n++
		}
		for _, l := range st.Lines {
			r.line("gateways", "%s", l)
		}
		if p, ok := s.Section.(gateways.Pairer); ok && st.Runs {
			r.line("gateways", "%s: %s", s.Name, pairingLine(s.Name, p.Pairs()))
		}
		for _, p := range st.Problems {
			r.problem("gateways", "%s", p)
		}
	}
	if n == 0 {
		r.problem("gateways", "no gateway is enabled")
	}
}

// pairingLine says what gateways.<name>.pairing does as set.
func pairingLine(name string, on bool) string {
	if on {
		return "pairing on: a stranger who writes in a direct message gets a code, and an approver's /pair CODE lets them in"
	}
	return "pairing off (gateways." + name + ".pairing: true lets strangers ask for a code)"
}

func doctorHITL(r *report, cfg *config.Config) {
	h := cfg.HITL
	if len(h.Approvers) == 0 {
		r.problem("hitl", "hitl.approvers is empty: held actions could never be approved")
	} else {
		r.line("hitl", "approvers: %s", strings.Join(h.Approvers, ", "))
		if err := app.CheckApprovers(cfg); err != nil {
			r.problem("hitl", "%v", err)
		}
	}
	notify := "none"
	if len(h.Notify) > 0 {
		notify = strings.Join(h.Notify, ", ")
	}
	r.line("hitl", "notify: %s; ttl %s; self-approval %v", notify, h.TTL, h.AllowSelfApproval)
	if len(h.People) > 0 {
		groups := make([]string, len(h.People))
		for i, ids := range h.People {
			groups[i] = strings.Join(ids, " = ")
		}
		r.line("hitl", "people (each one person to four-eyes): %s", strings.Join(groups, "; "))
	}
	if len(cfg.Policy.Rules) == 0 {
		r.line("policy", "no rules: read-only tools allowed, everything else needs approval")
	}
	for i, rule := range cfg.Policy.Rules {
		args := ""
		if rule.Args != "" {
			args = " args~" + rule.Args
		}
		r.line("policy", "%d. %s%s → %s", i+1, rule.Tool, args, rule.Decision)
		if core.LooseShellAllow(rule.Tool, rule.Args, rule.Verdict()) {
			r.warning("policy", "policy.rules[%d]: %s", i, looseShellWarning)
		}
	}
}

// looseShellWarning is what doctor and `bot policy explain` say of an
// allow rule on shell whose pattern is not anchored at both ends
// (core.LooseShellAllow).
const looseShellWarning = `allows shell commands by an args pattern not anchored at both ends, ` +
	`so it also allows whatever a command adds before or after what it names ("kubectl get pods; curl … | sh", ` +
	`or a newline and another command); match the whole arguments: ^\{"command":"…"\}$`

func doctorTools(r *report, cfg *config.Config) {
	ws, err := filepath.Abs(cfg.Tools.Workspace)
	if err != nil {
		r.problem("tools", "tools.workspace: %v", err)
		return
	}
	if err := writableDir(ws); err != nil {
		r.problem("tools", "tools.workspace %s: %v", ws, err)
		return
	}
	r.line("tools", "workspace %s (writable); shell, read_file, write_file, list_dir, http_get, current_time", ws)
	if cfg.Tools.HTTP.AllowPrivate {
		r.line("tools", "http_get may reach private and loopback addresses (tools.http.allow_private)")
	}
	doctorSandbox(r, cfg.Tools.Sandbox)
}

// doctorSandbox says how shell commands will be confined, and why not when
// the kernel cannot do what tools.sandbox asks.
func doctorSandbox(r *report, setting string) {
	sandbox, warnings := supervise.Choose(setting)
	abi, err := supervise.Support()
	if setting == "workspace-write" && err != nil {
		r.problem("sandbox", "tools.sandbox is workspace-write, but %v", err)
		return
	}
	if sandbox == supervise.SandboxOff {
		r.line("sandbox", "off: shell commands run with the bot's own rights")
	} else {
		r.line("sandbox", "workspace-write (Landlock ABI %d): shell commands write only the workspace and a private TMPDIR", abi)
	}
	for _, w := range warnings {
		r.warning("sandbox", "%s", w)
	}
}

// writableDir checks that dir exists or can be created, and is writable.
func writableDir(dir string) error {
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		parent := filepath.Dir(dir)
		if err := writableProbe(parent); err != nil {
			return fmt.Errorf("does not exist and cannot be created: %w", err)
		}
		return nil
	}
	return writableProbe(dir)
}

func writableProbe(dir string) error {
	f, err := os.CreateTemp(dir, ".gatehouse-doctor-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// doctorStore reports the store; redact is the bot's, for comparing this
// file with the configurations of the instances sharing it.
func doctorStore(ctx context.Context, r *report, cfg *config.Config, redact func(string) string) {
	d, err := storetable.Lookup(cfg.Store.Driver)
	if err != nil {
		r.problem("store", "%v", err)
		return
	}
	where := d.Where(cfg)
	db, err := d.OpenReadOnly(ctx, cfg)
	if errors.Is(err, store.ErrNotCreated) {
		if err := d.Creatable(cfg); err != nil {
			r.problem("store", "%s %s cannot be created: %v", d.Name, where, err)
			return
		}
		r.line("store", "%s %s (will be created, schema version %d)", d.Name, where, d.SchemaVersion)
		return
	}
	if errors.Is(err, store.ErrSchemaOld) {
		// Not a problem: the bot migrates it before anything else.
		r.line("store", "%s %s (an older schema: the bot upgrades it to version %d when it starts)", d.Name, where, d.SchemaVersion)
		return
	}
	if err != nil {
		r.problem("store", "%v", err)
		return
	}
	defer db.Close()
	r.line("store", "%s %s (schema version %d)", d.Name, where, d.SchemaVersion)
	if srv, ok := db.(store.Server); ok {
		v, err := srv.ServerVersion(ctx)
		if err != nil {
			r.problem("store", "%v", err)
			return
		}
		// The server's own text: shown, not trusted.
		r.line("store", "server: %s", textutil.Visible(v))
	}
	doctorCluster(ctx, r, cfg, db, redact)
	allows, err := db.StandingAllows(ctx)
	if err != nil {
		r.problem("store", "standing allows: %v", err)
		return
	}
	if len(allows) == 0 {
		r.line("hitl", "standing allows: none")
	}
	for _, s := range allows {
		// A model wrote the arguments: no control or bidi character of
		// theirs reaches the terminal raw (they are JSON, already escaped
		// once).
		r.line("hitl", "standing allow #%d: %s %s (by %s, %s)", s.ID, textutil.Visible(s.Tool),
			textutil.VisibleEscaped(s.Args), textutil.Visible(string(s.AddedBy)), s.Added.Format("2006-01-02"))
	}
}
