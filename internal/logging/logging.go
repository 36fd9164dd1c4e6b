// Package logging builds the bot's zerolog.Logger: human-readable on a
// terminal, JSON otherwise, with every line scrubbed of secrets before it
// is written. It never touches zerolog's global logger; of zerolog's
// settings it sets one, once, from main: DurationsWithUnits.
package logging

import (
	"io"
	"os"
	"sync/atomic"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// Output formats.
const (
	FormatAuto    = "auto"    // console on a terminal, JSON otherwise
	FormatConsole = "console" // human-readable lines
	FormatJSON    = "json"    // one JSON object a line
)

// Options configure New.
type Options struct {
	// Level is debug, info, warn or error; empty or unknown means info.
	Level string
	// Format is FormatAuto, FormatConsole or FormatJSON; empty means auto.
	Format string
	// Terminal says the writer is a TTY: auto picks the console format,
	// and the console format uses colours.
	Terminal bool
	// Secrets are removed from every line, as are strings shaped like
	// well-known API keys (even with a nil Set).
	Secrets *secrets.Set
	// Quiet raises the level to at least warn, e.g. while a chat on the
	// terminal shares it.
	Quiet bool
	// Var, when set, holds the level instead (Level and Quiet set it at
	// first) so that a configuration reload can change it: see LevelVar.
	Var *LevelVar
}

// LevelVar is a log level that can change while its logger runs. The
// logger asks it before building an event (as a zerolog.Sampler), so an
// event below the level costs no more than with a fixed level.
type LevelVar struct {
	level atomic.Int32
	quiet atomic.Bool
}

// Set sets the level: debug, info, warn or error (empty or unknown: info),
// at least warn when the logger's Options were Quiet.
func (v *LevelVar) Set(level string) {
	v.level.Store(int32(levelOf(level, v.quiet.Load())))
}

// Level returns the level in force.
func (v *LevelVar) Level() zerolog.Level { return zerolog.Level(v.level.Load()) }

// levelSampler lets through the events at or above its LevelVar's level.
type levelSampler struct{ v *LevelVar }

// Sample implements zerolog.Sampler.
func (s levelSampler) Sample(l zerolog.Level) bool { return l >= s.v.Level() }

// DurationsWithUnits makes every duration field (Event.Dur) print as Go
// writes a duration, with its unit ("1.5s", "250ms", "2m0s"), instead of
// zerolog's bare number of milliseconds ("retry_in":1000), which a reader
// takes for seconds as readily as for milliseconds. zerolog keeps this
// only in a package variable, read by every event: call it once, from
// main, before any logger exists (tests that do not leave the default).
func DurationsWithUnits() { zerolog.DurationFieldFormat = zerolog.DurationFormatString }

// New returns a logger writing to w. Writes are serialised, so w need not be
// safe for concurrent use.
func New(w io.Writer, o Options) zerolog.Logger {
	var out io.Writer = zerolog.SyncWriter(w)
	if console(o) {
		out = zerolog.ConsoleWriter{Out: out, NoColor: !o.Terminal, TimeFormat: "15:04:05", FormatPrepare: visibleMessage}
	}
	// The scrubber sees zerolog's JSON in both cases: the human-readable writer
	// formats what is already clean.
	out = &scrubber{out: out, secrets: o.Secrets}
	if o.Var != nil {
		o.Var.quiet.Store(o.Quiet)
		o.Var.Set(o.Level)
		return zerolog.New(out).Level(zerolog.DebugLevel).Sample(levelSampler{o.Var}).With().Timestamp().Logger()
	}
	return zerolog.New(out).Level(level(o)).With().Timestamp().Logger()
}

// visibleMessage escapes the control characters of a human-readable log line's
// message (textutil.Visible), which zerolog prints as it is: a message can
// quote a model's or a tool's words. Field values it already quotes.
func visibleMessage(evt map[string]any) error {
	if m, ok := evt[zerolog.MessageFieldName].(string); ok {
		evt[zerolog.MessageFieldName] = textutil.Visible(m)
	}
	return nil
}

func console(o Options) bool {
	switch o.Format {
	case FormatConsole:
		return true
	case FormatJSON:
		return false
	}
	return o.Terminal
}

func level(o Options) zerolog.Level { return levelOf(o.Level, o.Quiet) }

// levelOf parses s (info when empty or unknown), raised to warn when quiet.
func levelOf(s string, quiet bool) zerolog.Level {
	l, err := zerolog.ParseLevel(s)
	if err != nil || s == "" || l == zerolog.NoLevel {
		l = zerolog.InfoLevel
	}
	if quiet && l < zerolog.WarnLevel {
		l = zerolog.WarnLevel
	}
	return l
}

// IsTerminal reports whether f is a terminal (Cygwin and MSYS included).
func IsTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	fd := f.Fd()
	return isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
}
