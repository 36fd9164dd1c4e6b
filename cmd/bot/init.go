package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
	"github.com/gatehouse-bot/gatehouse/internal/dotenv"
)

// initFlags are bot init's answers given on the command line.
type initFlags struct {
	path       string
	yes        bool
	gateways   string
	approvers  string
	llmBaseURL string
	llmModel   string
	listen     string
	apiURLs    apiURLFlag
}

// apiURLFlag collects -api-url NAME=URL.
type apiURLFlag map[string]string

func (f apiURLFlag) String() string { return "" }

func (f apiURLFlag) Set(v string) error {
	name, u, ok := strings.Cut(v, "=")
	if !ok || name == "" || u == "" {
		return errors.New("want NAME=URL")
	}
	f[name] = u
	return nil
}

// errNotWritten ends bot init without writing anything; its message says why.
var errNotWritten = errors.New("nothing written")

// initCmd is `bot init`: it asks what the configuration needs, on a
// terminal, from piped answers or (-yes) from flags and the environment,
// and writes config.yaml and, for the secrets, .env beside it.
func initCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, path := newFlags("init", stderr)
	f := initFlags{apiURLs: apiURLFlag{}}
	fs.BoolVar(&f.yes, "yes", false, "ask nothing: answers from the flags, tokens from the environment, defaults for the rest")
	fs.StringVar(&f.gateways, "gateways", "", "the gateways to enable, comma-separated")
	fs.StringVar(&f.approvers, "approver", "", "who approves held actions: gateway:id, comma-separated")
	fs.StringVar(&f.llmBaseURL, "llm-base-url", "", "the OpenAI-compatible API's base URL")
	fs.StringVar(&f.llmModel, "llm-model", "", "the model")
	fs.StringVar(&f.listen, "http-listen", "127.0.0.1:9090", "http.listen to write (empty: no HTTP server)")
	fs.Var(f.apiURLs, "api-url", "NAME=URL: a gateway's API URL (a self-hosted server, a proxy); repeatable")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bot init: unexpected argument %q\n", fs.Arg(0))
		return exitConfig
	}
	f.path = *path
	p := newPrompter(ctx, stdin, stdout, f.yes)
	err := runInit(ctx, p, f)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errInitUsage):
		fmt.Fprintln(stderr, "bot init:", err)
		return exitConfig
	case errors.Is(err, errNotWritten):
		fmt.Fprintln(stderr, "bot init:", err)
		return exitFail
	}
	fmt.Fprintln(stderr, "bot init:", err, "(nothing written)")
	return exitFail
}

// errInitUsage marks a bad flag value.
var errInitUsage = errors.New("usage")

func initUsageErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errInitUsage, fmt.Sprintf(format, args...))
}

// initPlan is what bot init has gathered: the files' content comes from it.
type initPlan struct {
	gateways  []string          // the platform gateways enabled, in the table's order
	terminal  bool              // whether the terminal's gateway is enabled
	secrets   []dotenv.Entry    // for .env
	apiURLs   map[string]string // gateway → API URL, when not the default
	llm       llmChoice
	approvers []string
	listen    string
}

// runInit asks the questions and writes the files.
func runInit(ctx context.Context, p *prompter, f initFlags) error {
	abs, err := filepath.Abs(f.path)
	if err != nil {
		return err
	}
	envPath := dotenv.PathFor(abs)
	table := offeredGateways()
	for name := range f.apiURLs {
		if s, ok := table.byName(name); !ok || s.Setup == nil {
			return initUsageErr("-api-url %s: not a gateway with an API URL (%s)", name, strings.Join(table.platforms(), ", "))
		}
	}
	if p.yes {
		p.say("bot init -yes: writing %s and %s from flags, the environment and defaults.", abs, envPath)
	} else {
		p.say("bot init writes %s, and %s (mode 0600) for the secrets.", abs, envPath)
		p.say("Each question shows its default in [brackets]: Enter takes it. Tokens are not shown as you type.")
	}
	for _, file := range []string{abs, envPath} {
		if err := p.mayOverwrite(file); err != nil {
			return err
		}
	}
	plan := &initPlan{apiURLs: f.apiURLs, listen: f.listen}
	if err := askGateways(ctx, p, table, f, plan); err != nil {
		return err
	}
	if err := askLLM(ctx, p, f, plan); err != nil {
		return err
	}
	if err := askApprovers(p, table, f, plan); err != nil {
		return err
	}
	text := renderConfig(table, plan)
	// What is written must load: checked as the bot will read it, with
	// .env's values and nothing from this process's environment.
	cfg, err := config.Parse([]byte(text), dotenv.Lookup(func(string) (string, bool) { return "", false }, plan.secrets), gatewaytable.Specs())
	if err == nil {
		err = app.CheckApprovers(cfg)
	}
	if err != nil {
		return fmt.Errorf("the configuration it would write does not load: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return err
	}
	_, statErr := os.Stat(envPath)
	if len(plan.secrets) > 0 || statErr == nil { // an existing .env was agreed to be replaced
		data, err := dotenv.Format("Secrets for "+filepath.Base(abs)+", written by bot init. The bot reads this file\n"+
			"beside its configuration; a variable set in the environment wins over it.", plan.secrets)
		if err != nil {
			return err
		}
		if err := dotenv.WriteFile(envPath, data, 0o600); err != nil {
			return err
		}
		p.say("Wrote %s (mode 0600): %s.", envPath, cmp.Or(entryNames(plan.secrets), "no secrets"))
	}
	if err := dotenv.WriteFile(abs, []byte(text), 0o644); err != nil {
		return err
	}
	p.say("Wrote %s.", abs)
	p.say("")
	p.say("Next: bot doctor -config %s   checks it (-online: also the tokens and the key)", f.path)
	p.say("      bot -config %s          runs the bot", f.path)
	if len(plan.gateways) > 0 && !approverOn(plan.approvers, plan.gateways) {
		p.say("Send /whoami to the bot to learn your gateway:id; put it in hitl.approvers, and reload (kill -HUP).")
	}
	return nil
}

// approverOn reports whether one of approvers is on one of gateways.
func approverOn(approvers, gateways []string) bool {
	for _, a := range approvers {
		gw, _, _ := strings.Cut(a, ":")
		if slices.Contains(gateways, gw) {
			return true
		}
	}
	return false
}

func entryNames(es []dotenv.Entry) string {
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.Name
	}
	return strings.Join(names, ", ")
}

// gatewayChoices is the gateway table as bot init offers it.
type gatewayChoices []confkit.Spec

// offeredGateways returns the gateway table.
func offeredGateways() gatewayChoices { return gatewaytable.Specs() }

func (t gatewayChoices) byName(name string) (confkit.Spec, bool) {
	for _, s := range t {
		if s.Name == name {
			return s, true
		}
	}
	return confkit.Spec{}, false
}

// platforms names the gateways that need credentials.
func (t gatewayChoices) platforms() []string {
	var out []string
	for _, s := range t {
		if s.Setup != nil {
			out = append(out, s.Name)
		}
	}
	return out
}

// terminal returns the gateway of this terminal (needs no credentials;
// its one user approves by default), if the table has one.
func (t gatewayChoices) terminal() (confkit.Spec, bool) {
	for _, s := range t {
		if s.Setup == nil && len(s.DefaultApprovers) > 0 {
			return s, true
		}
	}
	return confkit.Spec{}, false
}

// envSet reports whether every credential of s is set in the environment.
func envSet(s confkit.Spec) bool {
	for _, sec := range s.Setup.Secrets {
		if os.Getenv(sec.Env) == "" {
			return false
		}
	}
	return true
}

// askGateways asks which gateways to enable and each one's credentials,
// checked online where the platform answers.
func askGateways(ctx context.Context, p *prompter, t gatewayChoices, f initFlags, plan *initPlan) error {
	term, hasTerm := t.terminal()
	var def []string
	for _, s := range t {
		if s.Setup != nil && envSet(s) {
			def = append(def, s.Name)
		}
	}
	if len(def) == 0 && hasTerm {
		def = []string{term.Name}
	}
	choices := slices.Clone(t.platforms())
	if hasTerm {
		choices = append(choices, term.Name+" (this terminal)")
	}
	var names []string
	if f.gateways != "" || p.yes {
		var err error
		if names, err = parseGateways(t, cmp.Or(f.gateways, strings.Join(def, ","))); err != nil {
			return initUsageErr("-gateways: %v", err)
		}
	}
	// On a terminal a wrong answer is asked again; piped answers would
	// go out of step, so there it ends bot init.
	for names == nil {
		answer, err := p.ask(fmt.Sprintf("Gateways to enable, comma-separated: %s", strings.Join(choices, ", ")), strings.Join(def, ","))
		if err != nil {
			return err
		}
		names, err = parseGateways(t, answer)
		if err != nil && (p.tty == nil || p.ended) {
			return err
		}
		if err != nil {
			p.say("  %v", err)
		}
	}
	for _, name := range names {
		s, _ := t.byName(name)
		if s.Setup == nil {
			plan.terminal = true
			continue
		}
		ok, err := askCredentials(ctx, p, s, plan)
		if err != nil {
			return err
		}
		if ok {
			plan.gateways = append(plan.gateways, name)
		}
	}
	return nil
}

// parseGateways splits a comma- or space-separated list of gateway names.
func parseGateways(t gatewayChoices, answer string) ([]string, error) {
	var names []string
	for _, given := range strings.FieldsFunc(answer, func(r rune) bool { return r == ',' || r == ' ' }) {
		n := strings.ToLower(strings.TrimSpace(given))
		if _, ok := t.byName(n); !ok {
			// Quoted as given: lowered, a key would lose its shape.
			return nil, fmt.Errorf("%s is not a gateway (%s)", quoteAnswer(strings.TrimSpace(given)), strings.Join(tableNames(t), ", "))
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, errors.New("no gateway named")
	}
	return names, nil
}

func tableNames(t gatewayChoices) []string {
	out := make([]string, len(t))
	for i, s := range t {
		out[i] = s.Name
	}
	return out
}

// askCredentials asks for a platform's credentials (hidden; the
// environment's value is the default), checks their shape as `bot doctor`
// does and then online. A credential of the wrong shape is asked again on
// a terminal; with -yes or piped answers it ends bot init (exit 2), naming
// the variable. It reports false when one was left empty: the gateway is
// then left out.
func askCredentials(ctx context.Context, p *prompter, s confkit.Spec, plan *initPlan) (bool, error) {
	values := map[string]string{}
	ask := s.Setup.Secrets
	for len(ask) > 0 {
		for _, sec := range ask {
			env := os.Getenv(sec.Env)
			if p.yes && env == "" {
				return false, initUsageErr("-gateways %s: %s is not set (with -yes, tokens come from the environment)", s.Name, sec.Env)
			}
			v, err := p.secret(sec.Prompt, sec.Env, env)
			if err != nil {
				return false, err
			}
			if v == "" {
				p.say("  No %s: %s is left out (bot init again, or add %s to .env and gateways.%s to the configuration).", sec.Key, s.Setup.Title, sec.Env, s.Name)
				return false, nil
			}
			values[sec.Env] = v
		}
		bad := credentialProblems(s, values, plan.apiURLs[s.Name])
		ask = nil
		for _, b := range bad {
			switch {
			case p.yes:
				return false, initUsageErr("-gateways %s: from the environment, %s", s.Name, b.problem)
			case p.tty == nil || p.ended:
				return false, initUsageErr("%s", b.problem)
			}
			p.say("  %s", b.problem)
			if !slices.Contains(ask, b.secret) {
				ask = append(ask, b.secret)
			}
		}
	}
	for _, sec := range s.Setup.Secrets {
		plan.secrets = append(plan.secrets, dotenv.Entry{Name: sec.Env, Value: values[sec.Env]})
	}
	line, ok := checkGateway(ctx, s, values, plan.apiURLs[s.Name])
	if ok {
		p.say("  Checked: %s", line)
	} else {
		p.say("  Could not check it now (%s); it is kept: `bot doctor -online` checks it again.", line)
	}
	return true, nil
}
