// Command bot runs gatehouse: an LLM agent in Telegram, Discord, Slack and
// the terminal, whose risky actions wait for a human's approval.
//
//	bot [run] [-config config.yaml] [-v]   run the bot
//	bot doctor [-config config.yaml]       check the configuration
//	bot audit [-since 24h] [-json] …       print the audit log
//	bot version                            print the version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// Exit codes.
const (
	exitOK     = 0
	exitFail   = 1
	exitConfig = 2 // bad configuration or usage: nothing was started
)

func main() {
	hardenProcess()
	ctx, stop := stopOnSignal()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
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
	if len(args) > 0 && !isFlag(args[0]) {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "run":
		return runBot(ctx, args, stdin, stdout, stderr)
	case "doctor":
		return doctor(ctx, args, stdout, stderr)
	case "audit":
		return audit(ctx, args, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "gatehouse", version)
		return exitOK
	case "help", "-h", "--help":
		usage(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "bot: unknown command %q\n", cmd)
	usage(stderr)
	return exitConfig
}

func isFlag(s string) bool { return len(s) > 0 && s[0] == '-' }

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  bot [run] [-config config.yaml] [-v]   run the bot (console + configured gateways)
  bot doctor [-config config.yaml]       check the configuration, say what would run
  bot audit [-config …] [-since 24h] [-conv K] [-tool T] [-status S] [-limit N] [-json]
  bot version                            print the version
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
