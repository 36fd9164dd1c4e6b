package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/internal/dotenv"
	"github.com/gatehouse-bot/gatehouse/internal/logging"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/startup"
)

// runBot loads the configuration and runs the bot until ctx ends (SIGINT,
// SIGTERM) or, when the only gateway reads the terminal, its input ends.
func runBot(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, path := newFlags("run", stderr)
	verbose := fs.Bool("v", false, "show info logs on a terminal too")
	trace := fs.Bool("trace-startup", false, "print each phase of the start-up with its duration, page faults and heap bytes allocated on stderr, up to the first receive (a gateway's first poll)")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if *trace {
		ctx = startup.With(ctx, startup.New(stderr, cmp.Or(mainStarted, time.Now())).WithCosts())
		startup.Mark(ctx, "flags")
	}
	// Caught from now on, so that a SIGHUP during start-up does not kill
	// the bot; it is handled once the bot is built.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	cfg, sec, code := loadConfig(*path, stderr)
	if cfg == nil {
		return code
	}
	startup.Mark(ctx, "configuration: file, .env, secrets")
	interactive := isTerminal(stdin) && gatewaytable.UsesTerminal(cfg.Gateways)
	// The chat shares the terminal with the logs when the user types there,
	// or when piped input's replies and the logs both land on it.
	chatOnTerminal := interactive || gatewaytable.UsesTerminal(cfg.Gateways) && isTerminal(stdout) && isTerminal(stderr)
	var level logging.LevelVar
	log := newLogger(cfg, sec, stderr, chatOnTerminal && !*verbose, &level)
	startup.Mark(ctx, "logger")
	a, err := app.New(ctx, app.Options{
		Config: cfg, Stdin: stdin, Stdout: stdout, Interactive: interactive, Log: log, Secrets: sec,
		Load:        func() (*config.Config, error) { return loadConfigFile(*path) },
		SetLogLevel: level.Set,
		Version:     version,
	})
	if err != nil {
		// One line, printed once: the logger writes to the same stderr.
		fmt.Fprintln(stderr, "bot:", sec.Redact(err.Error()))
		if errors.Is(err, app.ErrConfig) {
			return exitConfig
		}
		return exitFail
	}
	defer a.Close()
	warnIfRoot(log) // once it is sure to run: a refused start prints one line only
	go reloadOnHangup(ctx, hup, a)
	context.AfterFunc(ctx, func() {
		log.Warn().Msg("stopping: turns in flight get a grace period to finish; a second Ctrl-C (or signal) stops at once")
	})
	err = a.Run(ctx)
	if errors.Is(err, app.ErrInstanceInUse) {
		// One line, as for a refused start: nothing ran.
		fmt.Fprintln(stderr, "bot:", sec.Redact(err.Error()))
		return exitFail
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Error().Err(err).Msg("stopped with an error")
		return exitFail
	}
	log.Info().Msg("stopped")
	return exitOK
}

// warnIfRoot warns, in one line, when the bot runs as root.
func warnIfRoot(log zerolog.Logger) {
	if os.Geteuid() != 0 {
		return
	}
	log.Warn().Msg("running as root: every approved shell command runs as root too and can change anything on this machine, and no tool is kept from other processes' secrets; run the bot as an unprivileged user")
}

// reloadOnHangup reloads the configuration at each SIGHUP until ctx ends
// (App.Reload logs the outcome and serialises reloads).
func reloadOnHangup(ctx context.Context, hup <-chan os.Signal, a *app.App) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			a.ReloadBy(ctx, app.ReloadBySignal) //nolint:errcheck // logged by Reload; the running configuration is kept
		}
	}
}

// loadConfigFile loads the configuration at path as the bot does at
// start-up, for a reload.
// ${VAR} expands from the environment, then from the .env file beside it.
func loadConfigFile(path string) (*config.Config, error) {
	env, err := dotenv.Read(dotenv.PathFor(path))
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(path, dotenv.Lookup(os.LookupEnv, env), gatewaytable.Specs())
	if err == nil {
		err = app.CheckStore(cfg)
	}
	return cfg, err
}

// loadConfig loads the configuration and collects the secrets it and the
// environment hold. On a configuration error it prints one line naming the
// key and returns exitConfig with a nil config.
func loadConfig(path string, stderr io.Writer) (*config.Config, *secrets.Set, int) {
	cfg, err := loadConfigFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		// The first run outside the repository: say how to name the file.
		fmt.Fprintf(stderr, "bot: %s: no such file; pass -config PATH\n", path)
		return nil, nil, exitConfig
	}
	if err != nil {
		fmt.Fprintln(stderr, "bot:", err)
		return nil, nil, exitConfig
	}
	env, _ := dotenv.Read(dotenv.PathFor(path)) // read without error just before
	sec := secrets.New(append(append(cfg.Secrets(), secrets.FromEnv(os.Environ())...), secrets.FromEnv(dotenv.Environ(env))...)...)
	if fi, err := os.Stat(dotenv.PathFor(path)); err == nil && fi.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(stderr, "bot: warning: %s holds secrets and is readable by other users (mode %#o): chmod 600 it\n", dotenv.PathFor(path), fi.Mode().Perm())
	}
	return cfg, sec, exitOK
}

// newLogger builds the process logger on stderr. quiet raises the level to
// warn so logs don't interleave with an interactive chat on the terminal.
// level, when not nil, holds the level so that a reload can change it.
func newLogger(cfg *config.Config, sec *secrets.Set, stderr io.Writer, quiet bool, level *logging.LevelVar) zerolog.Logger {
	return logging.New(stderr, logging.Options{
		Level:    cfg.Log.Level,
		Format:   cfg.Log.Format,
		Terminal: isTerminal(stderr),
		Secrets:  sec,
		Quiet:    quiet,
		Var:      level,
	})
}

// isTerminal reports whether v is a terminal file.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && logging.IsTerminal(f)
}
