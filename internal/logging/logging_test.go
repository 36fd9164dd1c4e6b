package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/rs/zerolog"
)

const (
	token  = "123456:tg-token-value"
	apiKey = `k3y"with\quote`                      // needs escaping in JSON
	bare   = "sk-abcdefghijklmnopqrstuvwxyz012345" // not in the set: caught by shape
)

var set = secrets.New(token, apiKey)

type nested struct {
	Outer struct {
		Inner []string
	}
}

func newNested() nested {
	var n nested
	n.Outer.Inner = []string{"ok", "Bearer " + token}
	return n
}

// logEverywhere puts secrets in a message, fields, an error, a nested
// struct, a key name and a map.
func logEverywhere(l zerolog.Logger) {
	l.Info().Msg("connecting with " + token)
	l.Info().Str("token", token).Str("key", apiKey).Str("bare", bare).Msg("fields")
	l.Error().Err(fmt.Errorf(`post "https://api.telegram.org/bot%s/getMe": refused`, token)).Msg("error")
	l.Warn().Interface("req", newNested()).Msg("nested")
	l.Info().Str(token, "as a key").Any("m", map[string]any{"k": apiKey}).Msg("keys")
	l.Info().Msgf("printf %v %q", apiKey, token) // %q of a token is the token: real tokens need no escaping
}

func assertClean(t *testing.T, out string) {
	t.Helper()
	for _, leak := range []string{token, apiKey, bare, `k3y\"with\\quote`, "tg-token-value", "abcdefghijklmnopqrstuvwxyz"} {
		if strings.Contains(out, leak) {
			t.Errorf("output contains %q:\n%s", leak, out)
		}
	}
}

func TestJSONNeverLeaksAndStaysValid(t *testing.T) {
	var buf bytes.Buffer
	logEverywhere(New(&buf, Options{Format: FormatJSON, Secrets: set}))
	out := buf.String()
	assertClean(t, out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6:\n%s", len(lines), out)
	}
	for _, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("invalid JSON %v: %s", err, line)
		}
		if !strings.Contains(line, secrets.Mask) {
			t.Errorf("nothing masked in %s", line)
		}
	}
	var first map[string]any
	_ = json.Unmarshal([]byte(lines[0]), &first)
	if first["message"] != "connecting with "+secrets.Mask || first["level"] != "info" || first["time"] == nil {
		t.Errorf("first line = %v", first)
	}
}

func TestConsoleNeverLeaks(t *testing.T) {
	for _, o := range []Options{
		{Format: FormatConsole, Secrets: set},
		{Format: FormatAuto, Terminal: true, Secrets: set},
	} {
		var buf bytes.Buffer
		logEverywhere(New(&buf, o))
		out := buf.String()
		assertClean(t, out)
		if json.Valid([]byte(strings.SplitN(out, "\n", 2)[0])) || !strings.Contains(out, "connecting with "+secrets.Mask) {
			t.Errorf("%+v: want human-readable lines, got:\n%s", o, out)
		}
		if colored := strings.Contains(out, "\x1b["); colored != o.Terminal {
			t.Errorf("%+v: colours %v", o, colored)
		}
	}
}

func TestFormatSelection(t *testing.T) {
	tests := []struct {
		format   string
		terminal bool
		json     bool
	}{
		{FormatAuto, false, true}, {"", false, true}, {FormatAuto, true, false}, {"", true, false},
		{FormatJSON, true, true}, {FormatConsole, false, false},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		l := New(&buf, Options{Format: tt.format, Terminal: tt.terminal})
		l.Info().Msg("hello")
		if got := json.Valid(bytes.TrimSpace(buf.Bytes())); got != tt.json {
			t.Errorf("format %q terminal %v: JSON %v, want %v: %s", tt.format, tt.terminal, got, tt.json, buf.String())
		}
	}
}

func TestLevelFiltering(t *testing.T) {
	tests := []struct {
		level string
		quiet bool
		want  string // the levels that get through, of debug info warn error
	}{
		{"debug", false, "debug info warn error"},
		{"info", false, "info warn error"},
		{"", false, "info warn error"},
		{"nonsense", false, "info warn error"},
		{"warn", false, "warn error"},
		{"error", false, "error"},
		{"debug", true, "warn error"},
		{"error", true, "error"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		l := New(&buf, Options{Level: tt.level, Quiet: tt.quiet, Format: FormatJSON})
		l.Debug().Msg("debug")
		l.Info().Msg("info")
		l.Warn().Msg("warn")
		l.Error().Msg("error")
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var m struct{ Message string }
			if json.Unmarshal([]byte(line), &m) == nil {
				got = append(got, m.Message)
			}
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("level %q quiet %v: got %q, want %q", tt.level, tt.quiet, got, tt.want)
		}
	}
}

func TestNilSetStillMasksKeyShapes(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, Options{Format: FormatJSON})
	l.Info().Str("k", bare).Msg("x")
	if strings.Contains(buf.String(), bare) || !json.Valid(bytes.TrimSpace(buf.Bytes())) {
		t.Errorf("output: %s", buf.String())
	}
}

func TestConcurrentWritesStayWhole(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, Options{Format: FormatJSON, Secrets: set})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				l.Info().Int("g", g).Int("i", i).Str("t", token).Msg("m")
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 200 {
		t.Fatalf("%d lines, want 200", len(lines))
	}
	for _, line := range lines {
		if !json.Valid([]byte(line)) || strings.Contains(line, token) {
			t.Fatalf("bad line %s", line)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrorPropagates(t *testing.T) {
	s := &scrubber{out: failWriter{}}
	if _, err := s.Write([]byte("{}\n")); err == nil {
		t.Error("want the writer's error")
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) || IsTerminal(nil) {
		t.Error("a file is not a terminal")
	}
}

// levelsThrough logs one line at each level and returns the messages
// that got through.
func levelsThrough(l zerolog.Logger, buf *bytes.Buffer) string {
	buf.Reset()
	l.Debug().Msg("debug")
	l.Info().Msg("info")
	l.Warn().Msg("warn")
	l.Error().Msg("error")
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m struct{ Message string }
		if json.Unmarshal([]byte(line), &m) == nil {
			got = append(got, m.Message)
		}
	}
	return strings.Join(got, " ")
}

func TestLevelVarChangesTheLevelOfARunningLogger(t *testing.T) {
	var buf bytes.Buffer
	var v LevelVar
	l := New(&buf, Options{Level: "warn", Format: FormatJSON, Var: &v})
	if got := levelsThrough(l, &buf); got != "warn error" {
		t.Fatalf("at start: %q", got)
	}
	child := l.With().Str("component", "x").Logger() // made before the change
	for _, step := range []struct{ level, want string }{
		{"debug", "debug info warn error"},
		{"error", "error"},
		{"", "info warn error"},
	} {
		v.Set(step.level)
		if got := levelsThrough(child, &buf); got != step.want {
			t.Errorf("after Set(%q): got %q, want %q", step.level, got, step.want)
		}
	}
}

func TestLevelVarStaysQuiet(t *testing.T) {
	var buf bytes.Buffer
	var v LevelVar
	l := New(&buf, Options{Level: "info", Quiet: true, Format: FormatJSON, Var: &v})
	v.Set("debug")
	if got := levelsThrough(l, &buf); got != "warn error" {
		t.Errorf("quiet logger after Set(debug): %q", got)
	}
}

func TestLevelVarIsRaceFree(t *testing.T) {
	var buf bytes.Buffer
	var v LevelVar
	l := New(&buf, Options{Level: "info", Format: FormatJSON, Var: &v})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			l.Info().Msg("x")
		}
	}()
	for i := range 100 {
		v.Set([]string{"debug", "error"}[i%2])
	}
	<-done
}

// TestLevelVarBuildsNoEventBelowTheLevel: an event below the level is not
// built at all (no cost beyond a fixed level's).
func TestLevelVarBuildsNoEventBelowTheLevel(t *testing.T) {
	var buf bytes.Buffer
	var v LevelVar
	l := New(&buf, Options{Level: "info", Format: FormatJSON, Var: &v})
	built := false
	l.Debug().Func(func(*zerolog.Event) { built = true }).Msg("debug")
	if built || buf.Len() != 0 {
		t.Errorf("a debug event at info: built %v, output %q", built, buf.String())
	}
	v.Set("debug")
	l.Debug().Func(func(*zerolog.Event) { built = true }).Msg("debug")
	if !built {
		t.Error("a debug event at debug was not built")
	}
}
