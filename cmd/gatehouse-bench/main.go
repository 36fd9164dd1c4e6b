// Command gatehouse-bench measures the real bot binary against the in-repo
// fakes: it builds ./cmd/bot, serves a fake Telegram Bot API and a fake
// OpenAI API on 127.0.0.1 itself, starts the bot with a temporary
// configuration pointing at them, and prints, with the machine it ran on:
//
//   - idle RSS (VmRSS and VmHWM after start-up and one message),
//   - start-up to the first getUpdates (median of several runs),
//   - CPU time per message (utime+stime over a burst, divided by its size),
//   - replies per second for a burst of messages over many chats,
//   - messages lost, merged (one reply answering two) or duplicated,
//   - the size of the LLM request body of a one-word turn ("hi").
//
// Usage (from the repository):
//
//	go run ./cmd/gatehouse-bench [-messages 1000] [-chats 100] [-runs 7] [-short]
//	                             [-bot PATH] [-cpuprofile FILE] [-request FILE]
//	                             [-baseline REF [-rounds N]] [-versus PATH]
//	                             [-instances 1,2,3 [-dsn postgres://…]]
//
// With -instances and a PostgreSQL server (-dsn, or the variable
// GATEHOUSE_TEST_POSTGRES_DSN) it then runs the same burst against 1, 2, 3
// instances of the bot on one fresh database each and prints replies per
// second, CPU per message and the database's transactions and rows written
// per message (pg_stat_database); without a server it says in one line
// that it skipped them.
//
// It is a command rather than a test because it reports figures and is run
// by hand and in CI; it asserts no timing. It exits 1 when any message is
// lost, merged, duplicated or misrouted (or the bench cannot run), 2 on bad
// usage.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the command's flags.
type options struct {
	messages, chats, runs int
	bot, cpuprofile       string
	request               string // -request: where the "hi" request body goes
	baseline              string // -baseline: the git ref measured beside this build
	rounds                int    // -rounds: bursts of each build, alternated
	// instances lists the multi-instance runs (-instances 1,2,3): that
	// many bots on one PostgreSQL database on the server dsn names.
	instances []int
	dsn       string
	// versus is another bot binary (main's build) whose start-ups and
	// memory after start are measured interleaved with this build's.
	versus string
}

// parseOptions parses the flags; -short picks the CI sizes unless a size
// flag is given too.
func parseOptions(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("gatehouse-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.IntVar(&o.messages, "messages", 1000, "messages in the burst")
	fs.IntVar(&o.chats, "chats", 100, "chats the burst is spread over")
	fs.IntVar(&o.runs, "runs", 7, "start-ups measured (the median is reported)")
	short := fs.Bool("short", false, "CI size: 200 messages over 20 chats, 3 start-ups")
	fs.StringVar(&o.bot, "bot", "", "bot binary to measure (default: build ./cmd/bot into a temporary directory)")
	fs.StringVar(&o.baseline, "baseline", "", "also build ./cmd/bot at this git ref (e.g. main) and measure it the same way, one after the other, each figure beside this build's")
	fs.IntVar(&o.rounds, "rounds", 1, "with -baseline: measure each build this many times, alternating (change, baseline, change, …); the start-ups of all rounds and the median round's CPU are reported")
	fs.StringVar(&o.request, "request", "", "write the LLM request body of the \"hi\" turn to FILE")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the bot (its \"hi\" turn and the burst) to FILE; builds the bot with -tags gatehouse_pprof")
	instances := fs.String("instances", "", "also run the bot as this many instances on one PostgreSQL database, for each count of a comma-separated list (1,2,3); needs -dsn or "+dsnEnv)
	fs.StringVar(&o.versus, "versus", "", "also start this other bot binary (a build of main) -runs times, interleaved with this build, and print the start-up and the memory after start of each")
	fs.StringVar(&o.dsn, "dsn", "", "PostgreSQL server for -instances, as a role that may create databases (default $"+dsnEnv+"); each run gets a fresh database, dropped afterwards")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var err error
	if o.instances, err = parseInstances(*instances); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *short {
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		for name, v := range map[string]*int{"messages": &o.messages, "chats": &o.chats, "runs": &o.runs} {
			if !given[name] {
				*v = map[string]int{"messages": 200, "chats": 20, "runs": 3}[name]
			}
		}
	}
	if o.messages < 1 || o.chats < 1 || o.runs < 1 || o.rounds < 1 {
		return o, fmt.Errorf("-messages, -chats, -runs and -rounds must be at least 1")
	}
	return o, nil
}

// run runs the bench and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
	if err != nil {
		if err != flag.ErrHelp {
			fmt.Fprintln(stderr, "gatehouse-bench:", err)
		}
		return exitUsage
	}
	dir, err := os.MkdirTemp("", "gatehouse-bench-")
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse-bench:", err)
		return exitFail
	}
	defer os.RemoveAll(dir)
	rep, base, err := measureAll(ctx, o, dir, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse-bench:", err)
		return exitFail
	}
	rep.print(stdout, base, o.baseline)
	if o.request != "" {
		if err := os.WriteFile(o.request, rep.hiText, 0o600); err != nil {
			fmt.Fprintln(stderr, "gatehouse-bench:", err)
			return exitFail
		}
	}
	if !rep.tally.ok() {
		fmt.Fprintln(stderr, "gatehouse-bench: FAIL: every message must get exactly one reply of its own")
		return exitFail
	}
	if o.versus != "" {
		figs, err := measureVersus(ctx, o, []string{rep.bin, o.versus}, dir, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse-bench: versus:", err)
			return exitFail
		}
		printVersus(stdout, figs)
	}
	if len(o.instances) == 0 {
		return exitOK
	}
	dsn := o.dsn
	if dsn == "" {
		dsn = os.Getenv(dsnEnv)
	}
	if dsn == "" {
		fmt.Fprintln(stdout, "\nmulti-instance mode skipped: no PostgreSQL server (pass -dsn or set "+dsnEnv+")")
		return exitOK
	}
	runs, err := measureCluster(ctx, o, rep.bin, dsn, dir, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse-bench: multi-instance:", err)
		return exitFail
	}
	printCluster(stdout, runs, o)
	for _, r := range runs {
		if !r.tally.ok() {
			fmt.Fprintf(stderr, "gatehouse-bench: FAIL: %d instances: every message must get exactly one reply of its own\n", r.instances)
			return exitFail
		}
	}
	return exitOK
}
