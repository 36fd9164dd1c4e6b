package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/app/storetable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// Exit codes of `bot policy test`: the decision of the call (allow is
// exitOK), or exitFail for a cases file with a failing case.
const (
	exitApprove = 3
	exitDeny    = 4
)

// policyCmd dispatches `bot policy test` and `bot policy explain`.
func policyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "bot policy: want a subcommand: test or explain (bot help lists their flags)")
		return exitConfig
	}
	switch args[0] {
	case "test":
		return policyTest(ctx, args[1:], stdout, stderr)
	case "explain":
		return policyExplain(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "bot policy: unknown subcommand %q: want test or explain\n", args[0])
	return exitConfig
}

// judge is a configuration's policy, built by the code the running bot
// uses (app.Tools, app.Policy), with the real tool registry and
// canonicalisation; it starts nothing.
type judge struct {
	cfg     *config.Config
	sec     *secrets.Set
	catalog policyCatalog
	gate    *core.PolicyGate
	cleanup func()
}

// newJudge loads the policy of cfg. The built-in tools are registered over
// a scratch workspace removed by cleanup: judging a call reads no file of
// the real one, and nothing is created beside the configuration.
func newJudge(cfg *config.Config, sec *secrets.Set) (*judge, error) {
	scratch, err := os.MkdirTemp("", "gatehouse-policy-")
	if err != nil {
		return nil, fmt.Errorf("policy: scratch workspace: %w", err)
	}
	toolCfg := *cfg
	toolCfg.Tools.Workspace = scratch
	reg, err := app.Tools(&toolCfg, sec, zerolog.Nop())
	if err != nil {
		os.RemoveAll(scratch)
		return nil, err
	}
	if err := registerSkillTools(cfg, reg); err != nil {
		os.RemoveAll(scratch)
		return nil, err
	}
	cat := policyCatalog{Registry: reg, skills: len(cfg.Skills.Dirs) > 0}
	gate, err := app.Policy(cfg, cat)
	if err != nil {
		os.RemoveAll(scratch)
		return nil, err
	}
	return &judge{cfg: cfg, sec: sec, catalog: cat, gate: gate, cleanup: func() { os.RemoveAll(scratch) }}, nil
}

// openJudge loads the configuration at path and its policy for `bot
// policy <sub>`; nil with the exit code when it cannot, the error printed.
func openJudge(path, sub string, stderr io.Writer) (*judge, int) {
	cfg, sec, code := loadConfig(path, stderr)
	if cfg == nil {
		return nil, code
	}
	j, err := newJudge(cfg, sec)
	if err != nil {
		fmt.Fprintf(stderr, "bot policy %s: %v\n", sub, err)
		return nil, exitConfig
	}
	return j, exitOK
}

// policyCatalog is the tool registry, plus every MCP tool ("mcp__…"): no
// MCP server is started, so such a name is judged by the rules alone, its
// arguments only required to be a JSON object.
type policyCatalog struct {
	*tools.Registry
	skills bool // skills.dirs is set: enable_skill is known too
}

// ReadOnly implements core.ToolCatalog; an MCP tool is known and never
// read-only (the policy ignores its server's hint anyway).
func (c policyCatalog) ReadOnly(name string) (bool, bool) {
	if strings.HasPrefix(name, core.MCPPrefix) || (c.skills && name == core.EnableSkillTool) {
		return false, true
	}
	return c.Registry.ReadOnly(name)
}

// CheckArgs implements core.ToolCatalog.
func (c policyCatalog) CheckArgs(ctx context.Context, name, args string) error {
	if strings.HasPrefix(name, core.MCPPrefix) || (c.skills && name == core.EnableSkillTool) {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
			return errors.New("arguments must be a JSON object")
		}
		return nil
	}
	return c.Registry.CheckArgs(ctx, name, args)
}

// call is one call to judge: the tool, its JSON arguments as given, and
// where it would come from.
type call struct {
	tool, args string
	from       core.Identity
	conv       core.Conversation
}

// prepare canonicalises and checks the call's arguments exactly as the
// Engine does before any gate; an error is the caller's mistake (unknown
// tool, unknown argument, a key given twice, invalid JSON).
func (j *judge) prepare(ctx context.Context, c call) (core.Action, error) {
	args := strings.TrimSpace(c.args)
	if args == "" {
		args = "{}"
	}
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		return core.Action{}, fmt.Errorf("arguments: invalid JSON: %w", err)
	}
	// A key given twice is refused on the raw text, as the Engine does: a
	// decoder keeps one copy, and the rule would judge a call the tool may
	// not run.
	if err := core.RepeatedKey(args); err != nil {
		return core.Action{}, err
	}
	args = core.CanonicalArgs(args)
	if err := j.catalog.CheckArgs(ctx, c.tool, args); err != nil {
		return core.Action{}, err
	}
	return core.Action{Kind: core.ActionTool, Conv: c.conv, From: c.from,
		Call: llm.ToolCall{ID: "policy-test", Name: c.tool, Args: args}}, nil
}

// parseWho checks -identity and -conversation ("gateway:id",
// "gateway:chat[:thread]").
func parseWho(identity, conversation string) (core.Identity, core.Conversation, error) {
	g, id, ok := strings.Cut(identity, ":")
	if !ok || g == "" || id == "" {
		return "", core.Conversation{}, fmt.Errorf("identity %q: want gateway:id", identity)
	}
	conv, err := core.ParseConversation(conversation)
	if err != nil {
		return "", core.Conversation{}, err
	}
	return core.Identity(identity), conv, nil
}

// exitFor is the exit code of a decision.
func exitFor(v core.Verdict) int {
	switch v {
	case core.Allow:
		return exitOK
	case core.NeedsApproval:
		return exitApprove
	}
	return exitDeny
}

// policyTest judges one call (-tool, -args) or a table of cases (-cases).
func policyTest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags, path := newFlags("policy test", stderr)
	tool := flags.String("tool", "", "the tool's name (an mcp__… name is judged by the rules alone)")
	callArgs := flags.String("args", "{}", "the call's arguments, a JSON object")
	localID, localConv := gatewaytable.LocalCaller()
	identity := flags.String("identity", localID, "who the call comes from, gateway:id")
	conversation := flags.String("conversation", localConv, "the conversation, gateway:chat[:thread]")
	cases := flags.String("cases", "", "a YAML file of cases to run instead of one call")
	if code, done := parseFlags(flags, args); done {
		return code
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "bot policy test: unexpected argument %q\n", flags.Arg(0))
		return exitConfig
	}
	if (*cases == "") == (*tool == "") {
		fmt.Fprintln(stderr, "bot policy test: give -tool NAME [-args JSON], or -cases FILE")
		return exitConfig
	}
	if *cases != "" {
		// A case carries its own call: a flag for one call would be ignored.
		var extra string
		flags.Visit(func(f *flag.Flag) {
			if f.Name != "cases" && f.Name != "config" && extra == "" {
				extra = f.Name
			}
		})
		if extra != "" {
			fmt.Fprintf(stderr, "bot policy test: -%s does not go with -cases (each case gives its own tool, args, identity and conversation)\n", extra)
			return exitConfig
		}
	}
	j, code := openJudge(*path, "test", stderr)
	if j == nil {
		return code
	}
	defer j.cleanup()
	if *cases != "" {
		return runCases(ctx, j, *cases, stdout, stderr)
	}
	from, conv, err := parseWho(*identity, *conversation)
	if err != nil {
		fmt.Fprintln(stderr, "bot policy test:", err)
		return exitConfig
	}
	a, err := j.prepare(ctx, call{tool: *tool, args: *callArgs, from: from, conv: conv})
	if err != nil {
		fmt.Fprintf(stderr, "bot policy test: %s\n", j.sec.Redact(textutil.Visible(err.Error())))
		return exitConfig
	}
	return j.testOne(ctx, a, stdout, stderr)
}

// testOne judges a, as the running bot would with its store's standing
// allows, prints why and returns the decision's exit code.
func (j *judge) testOne(ctx context.Context, a core.Action, stdout, stderr io.Writer) int {
	st, standingNote := j.openStanding(ctx, stderr)
	if st != nil {
		defer st.Close()
		j.gate.Standing = standingCheck{st: st, workspace: j.cfg.Tools.Workspace}
	}
	jd := j.decide(ctx, a)
	show := func(s string) string { return j.sec.Redact(textutil.VisibleEscaped(s)) }
	fmt.Fprintf(stdout, "tool:         %s\n", show(a.Call.Name))
	fmt.Fprintf(stdout, "arguments:    %s\n", j.showEscaped(a.Call.Args))
	fmt.Fprintf(stdout, "from:         %s in %s\n", show(string(a.From)), show(a.Conv.Key()))
	if len(j.cfg.Profiles) > 0 {
		profile := jd.Profile
		if profile == "" {
			profile = "none (the top-level settings)"
		}
		fmt.Fprintf(stdout, "profile:      %s\n", show(profile))
	}
	fmt.Fprintf(stdout, "decision:     %s\n", jd.Decision.Verdict)
	rule := jd.Policy.Rule
	if jd.Standing {
		rule += fmt.Sprintf(" (%s, relaxed to allow by a standing allow)", jd.Policy.Verdict)
	}
	fmt.Fprintf(stdout, "rule:         %s\n", j.showEscaped(rule))
	if jd.Policy.Reason != "" && jd.Decision.Verdict == core.Deny {
		fmt.Fprintf(stdout, "reason:       %s\n", show(jd.Policy.Reason))
	}
	fmt.Fprintf(stdout, "standing:     %s\n", show(j.standingLine(ctx, st, standingNote, a, jd)))
	return exitFor(jd.Decision.Verdict)
}

// decide judges a as the running bot's gates do, in their order: the
// secret gate first (arguments holding one of the bot's secrets are
// denied, whatever the rules say), then the policy.
func (j *judge) decide(ctx context.Context, a core.Action) core.Judgement {
	if d := (core.SecretGate{Secrets: j.sec}).Check(ctx, a); d.Verdict == core.Deny {
		return core.Judgement{Decision: d, Policy: d}
	}
	if j.catalog.skills {
		return j.judgeSkills(ctx, a)
	}
	return j.gate.Judge(ctx, a)
}

// showEscaped returns text whose backslashes are all escapes already — a
// rule as Rule.Name writes it (quoted like a Go string), canonical JSON
// arguments — safe to print and with its secrets redacted, its
// backslashes left single: the rule reads as written in the configuration,
// the arguments as the JSON the tool gets. Any control character is still
// escaped.
func (j *judge) showEscaped(s string) string {
	return j.sec.Redact(textutil.VisibleEscaped(s))
}

// openStanding opens the store read-only for its standing allows; nil with
// a note when there is none yet or it cannot be read (then none applies).
func (j *judge) openStanding(ctx context.Context, stderr io.Writer) (store.Store, string) {
	st, err := storetable.OpenReadOnly(ctx, j.cfg)
	if errors.Is(err, store.ErrNotCreated) {
		d, _ := storetable.Lookup(j.cfg.Store.Driver) // loadConfig checked it
		return nil, fmt.Sprintf("none (no database at %s yet)", d.Where(j.cfg))
	}
	if err != nil {
		fmt.Fprintln(stderr, "bot policy test: standing allows not read:", j.sec.Redact(err.Error()))
		return nil, "unknown (the store could not be read)"
	}
	return st, ""
}

// standingLine says which standing allow there is for exactly this call
// and whether it applies.
func (j *judge) standingLine(ctx context.Context, st store.Store, note string, a core.Action, jd core.Judgement) string {
	if st == nil {
		return note
	}
	s, changed, err := hitl.StandingFor(ctx, st, j.cfg.Tools.Workspace, a.Call)
	switch {
	case errors.Is(err, record.ErrNotFound):
		return "none for exactly this call"
	case err != nil && s.ID == 0:
		return "unknown: " + err.Error()
	}
	desc := fmt.Sprintf("#%d added by %s at %s in %s", s.ID, s.AddedBy, s.Added.UTC().Format(time.DateTime+" UTC"), s.Conv)
	switch {
	case err != nil:
		return desc + ": does not apply (" + err.Error() + ")"
	case len(changed) > 0:
		return desc + ": does not apply, files changed since: " + strings.Join(changed, ", ")
	case core.ApprovedOnce(a.Call.Name):
		return desc + ": does not apply (approved only once: a person approves exactly the content shown)"
	case jd.Standing:
		return desc + ": applies (the call runs without asking)"
	case jd.Policy.Verdict == core.Deny:
		return desc + ": does not apply (a deny is never relaxed)"
	}
	return desc + ": not needed (the policy allows the call)"
}

// standingCheck is the running bot's standing-allow check over a store
// opened read-only.
type standingCheck struct {
	st        hitl.StandingStore
	workspace string
}

// StandingAllowed implements core.StandingAllows.
func (s standingCheck) StandingAllowed(ctx context.Context, tool, args string) bool {
	_, changed, err := hitl.StandingFor(ctx, s.st, s.workspace, llm.ToolCall{Name: tool, Args: args})
	return err == nil && len(changed) == 0
}

// policyExplain prints the effective rules, numbered from 1, then the
// decision for calls no rule matches.
func policyExplain(args []string, stdout, stderr io.Writer) int {
	flags, path := newFlags("policy explain", stderr)
	if code, done := parseFlags(flags, args); done {
		return code
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "bot policy explain: unexpected argument %q\n", flags.Arg(0))
		return exitConfig
	}
	j, code := openJudge(*path, "explain", stderr)
	if j == nil {
		return code
	}
	defer j.cleanup()
	fmt.Fprintf(stdout, "policy.rules of %s, first match wins:\n", textutil.Visible(*path))
	var catchAll *core.Rule
	for i, r := range j.gate.Rules {
		fmt.Fprintln(stdout, j.showEscaped(r.Name()))
		warnLoose(stdout, r)
		if catchAll == nil && r.Tool == "*" && r.Args == nil {
			catchAll = &j.gate.Rules[i]
		}
	}
	if len(j.gate.Rules) == 0 {
		fmt.Fprintln(stdout, "(none)")
	}
	fmt.Fprintln(stdout, j.defaults(catchAll))
	for _, p := range j.gate.Profiles.List() {
		tools := "every tool"
		if p.Tools != nil {
			tools = "only " + strings.Join(p.Tools, ", ")
			if len(p.Tools) == 0 {
				tools = "no tool"
			}
		}
		fmt.Fprintf(stdout, "\nprofile %s (%s; %s), its rules before policy.rules:\n",
			j.showEscaped(p.Name), j.showEscaped(strings.Join(p.Match, ", ")), j.showEscaped(tools))
		for _, r := range p.Rules {
			fmt.Fprintln(stdout, j.showEscaped(r.Name()))
			warnLoose(stdout, r)
		}
		if len(p.Rules) == 0 {
			fmt.Fprintln(stdout, "(none)")
		}
	}
	return exitOK
}

// warnLoose prints, under a rule that allows shell commands by a pattern
// not anchored at both ends, the warning doctor gives of it.
func warnLoose(stdout io.Writer, r core.Rule) {
	if r.LooseShellAllow() {
		fmt.Fprintln(stdout, "  warning: this rule "+looseShellWarning)
	}
}

// defaults describes the decision for tools no rule matches, per tool.
func (j *judge) defaults(catchAll *core.Rule) string {
	var allow, approve []string
	for _, spec := range j.catalog.Specs() {
		ro, _ := j.catalog.ReadOnly(spec.Name)
		if core.DefaultDecision(spec.Name, ro).Verdict == core.Allow {
			allow = append(allow, spec.Name)
		} else {
			approve = append(approve, spec.Name)
		}
	}
	slices.Sort(allow)
	slices.Sort(approve)
	var parts []string
	if len(allow) > 0 {
		parts = append(parts, "allow for the read-only tools ("+strings.Join(allow, ", ")+")")
	}
	if len(approve) > 0 {
		parts = append(parts, "approve for "+strings.Join(approve, ", "))
	}
	parts = append(parts, "approve for every MCP tool ("+core.MCPPrefix+"…)")
	if j.catalog.skills {
		parts = append(parts, core.WriteSkillTool+", "+core.EnableSkillTool+": always approved by a human, whatever the rules")
	}
	s := "default: " + strings.Join(parts, "; ")
	if catchAll != nil {
		s += fmt.Sprintf(" — never reached: rule #%d matches every call", catchAll.Index)
	}
	return s
}
