// Command bot runs gatehouse: an LLM agent in chat platforms and the
// terminal, whose risky actions wait for a human's approval.
//
//	bot [run] [-config config.yaml] [-v]   run the bot
//	bot init [-config config.yaml] [-yes …] write a configuration and .env by asking
//	bot doctor [-config config.yaml] [-online]  check the configuration (-online: and the services)
//	bot audit [-since 24h] [-json] …       print the audit log
//	bot healthcheck [-config …] [-ready]   ask a running bot's /healthz (or /readyz)
//	bot policy test -tool T -args JSON …   judge one call by the policy (exit 0 allow, 3 approve, 4 deny)
//	bot policy test -cases FILE            run a table of policy cases (exit 1 if one fails)
//	bot policy explain [-config …]         print the effective policy rules
//	bot version                            print the version, commit and its date
//	bot help                               list the commands and their flags
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/logging"
	"github.com/gatehouse-bot/gatehouse/internal/startup"
	"github.com/gatehouse-bot/gatehouse/internal/tzdata"
)

// Exit codes.
const (
	exitOK     = 0
	exitFail   = 1
	exitConfig = 2 // bad configuration or usage: nothing was started
)

// mainStarted is when main began: the start of -trace-startup's trace
// (the runtime's start and the packages' initialisation come before it;
// GODEBUG=inittrace=1 shows the latter).
var mainStarted time.Time

func main() {
	mainStarted = startup.Begin()
	limitProcs(os.Getenv)
	if loc, ok := tzdata.Local(syscall.Getenv, time.Local); ok {
		time.Local = loc // before any goroutine reads it
	}
	logging.DurationsWithUnits() // before any logger: zerolog reads it from a global
	hardenProcess()
	stopProfile := startProfile()
	ctx, stop := stopOnSignal()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	stopProfile()
	os.Exit(code)
}

// stopOnSignal returns a context that ends at the first SIGINT or SIGTERM.
// Handling ends with that first signal, so a second one (Ctrl-C again
// during the shutdown grace) kills the process the default way: the context
// is cancelled only after the handler is gone.
func stopOnSignal() (context.Context, context.CancelFunc) {
	sigCtx, unregister := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	context.AfterFunc(sigCtx, func() {
		unregister()
		cancel()
	})
	return ctx, func() {
		unregister()
		cancel()
	}
}

// run dispatches the subcommand and returns the process's exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && (!isFlag(args[0]) || isHelp(args[0])) {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "run":
		return runBot(ctx, args, stdin, stdout, stderr)
	case "init":
		return initCmd(ctx, args, stdin, stdout, stderr)
	case "doctor":
		return doctor(ctx, args, stdout, stderr)
	case "audit":
		return audit(ctx, args, stdout, stderr)
	case "healthcheck":
		return healthcheck(ctx, args, stdout, stderr)
	case "policy":
		return policyCmd(ctx, args, stdout, stderr)
	case "skills":
		return skillsCmd(ctx, args, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, buildVersion())
		return exitOK
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "bot: unknown command %q\n", cmd)
	usage(stderr)
	return exitConfig
}

func isFlag(s string) bool { return len(s) > 0 && s[0] == '-' }

// isHelp reports whether s asks for the overall help.
func isHelp(s string) bool { return s == "-h" || s == "-help" || s == "--help" }

// usage lists every command with its flags. `bot CMD -h` prints the same
// flags from the command's own flag set; TestHelpListsEveryFlag keeps the
// two in step.
func usage(w io.Writer) {
	fmt.Fprint(w, `usage: bot [command] [flags]

commands:
  run (the default)   run the bot: every enabled gateway
      -config FILE    configuration file (default config.yaml); relative
                      paths in it are relative to its directory
      -v              show info logs on a terminal too
      -trace-startup  print each phase of the start-up with its duration,
                      page faults and heap bytes allocated on stderr, up to
                      the first receive
  init                write a working configuration and, for its secrets, .env
                      beside it (mode 0600), by asking: gateways, tokens (not
                      shown; checked online when reachable), the LLM, who
                      approves; never replaces a file without asking
      -config FILE    the file to write (default config.yaml)
      -yes            ask nothing: answers from these flags, tokens from the
                      environment variables config.yaml names (…_BOT_TOKEN,
                      OPENAI_API_KEY),
                      defaults for the rest; refuses to replace a file
      -gateways LIST  the gateways to enable, comma-separated
      -approver LIST  who approves, gateway:id (send /whoami to the bot)
      -llm-base-url U the OpenAI-compatible API (default OpenAI's)
      -llm-model M    the model
      -api-url N=URL  a gateway's API URL (self-hosted server, proxy); repeatable
      -http-listen A  http.listen to write (default 127.0.0.1:9090)
  doctor              check the configuration and say what would run
      -config FILE    configuration file (default config.yaml)
      -online         also contact every configured service (LLM, gateways),
                      each reported with its latency; a gateway that fails
                      is a problem, a provider a warning
                      (exit 1 only for problems)
  audit               print the audit log (read-only, beside a running bot)
      -config FILE    configuration file (default config.yaml)
      -since D        how far back: 90m, 24h, 7d (default 24h)
      -conv KEY       only this conversation key
      -tool NAME      only this tool
      -status S       only this outcome: `+strings.Join(auditStatuses, ", ")+`
      -limit N        at most this many entries (default 100)
      -json           print JSON
      -usage          instead, token usage per UTC day (all conversations;
                      USD as recorded at each answering provider's price);
                      takes -since and -json
  audit verify        walk the audit log's hash chain: exit 0 with the rows
                      checked, 1 naming the first row that does not match
                      (edited or inserted; after a deletion the row after
                      the gap), 2 when the store cannot be opened or read
      -config FILE    configuration file (default config.yaml)
  healthcheck         GET /healthz on http.listen: exit 0 when the bot answers 200
      -config FILE    configuration file (default config.yaml)
      -timeout D      give up after this long (default `+healthcheckTimeout.String()+`)
      -ready          GET /readyz instead: every gateway connected and the
                      store answering (several instances on PostgreSQL)
  policy test         judge a tool call by policy.rules as the bot would,
                      without running it: prints the decision, the rule that
                      matched (#index and its text, "default: …", or "secret
                      gate" for arguments holding a bot secret) and the
                      standing allows that apply; exit 0 allow, 3 approve,
                      4 deny, 2 usage or config error
      -config FILE    configuration file (default config.yaml)
      -tool NAME      the tool (an mcp__… name is judged by the rules alone)
      -args JSON      its arguments, a JSON object (default {}); checked
                      against the tool's schema and canonicalised as at run time
      -identity I     who asks, gateway:id (default: the local terminal)
      -conversation C where, gateway:chat[:thread] (default: the local terminal)
      -cases FILE     instead, run a YAML table of cases (cases: a list of
                      {name, tool, args, identity, conversation, want}; not
                      with the four flags above; standing allows not
                      consulted); one line per case and a summary; exit 1
                      if any case fails, 2 if the file is invalid
  policy explain      print the effective rules, numbered from 1, then the
                      default for calls no rule matches
      -config FILE    configuration file (default config.yaml)
`+skillsUsage+`  version             print the version, commit, commit date and Go version
  help                print this help (also -h, --help)

exit status: 0 ok, 1 failure, 2 bad configuration or usage
(policy test: 0 allow, 3 approve, 4 deny)
`)
}

// newFlags returns a flag set that reports errors to stderr and the
// -config flag every command shares.
func newFlags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("bot "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "config.yaml", "configuration file")
	return fs, path
}

// parseFlags parses args; it reports the exit code to use when parsing ended
// the command (-h, or a bad flag).
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		return exitOK, true
	}
	return exitConfig, true
}
