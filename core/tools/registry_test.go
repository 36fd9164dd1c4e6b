package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// fakeTool is a Tool whose Run is a function.
type fakeTool struct {
	spec Spec
	run  func(ctx context.Context, args json.RawMessage) (string, error)
}

func (f fakeTool) Spec() Spec { return f.spec }
func (f fakeTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	return f.run(ctx, args)
}

// echo returns its arguments; it requires a string "text".
func echo(name string) fakeTool {
	return fakeTool{
		spec: Spec{Name: name, Description: "Echo.", ReadOnly: true, Parameters: json.RawMessage(
			`{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer"}},"required":["text"]}`)},
		run: func(_ context.Context, args json.RawMessage) (string, error) { return string(args), nil },
	}
}

func newTestRegistry(t *testing.T, opts Options, tools ...Tool) *Registry {
	t.Helper()
	opts.Log = zerolog.New(zerolog.NewTestWriter(t))
	r := NewRegistry(opts)
	for _, tool := range tools {
		if err := r.Register(tool); err != nil {
			t.Fatalf("Register(%s): %v", tool.Spec().Name, err)
		}
	}
	return r
}

func act(t *testing.T, r *Registry, name, args string) core.Result {
	t.Helper()
	res, err := r.Act(context.Background(), core.Action{Kind: core.ActionTool, Call: llm.ToolCall{Name: name, Args: args}})
	if err != nil {
		t.Fatalf("Act(%s, %s) error: %v", name, args, err)
	}
	return res
}

func TestActRejectsBadCalls(t *testing.T) {
	r := newTestRegistry(t, Options{}, echo("echo"))
	tests := []struct{ name, tool, args, want string }{
		{"unknown tool", "nope", `{}`, `error: unknown tool "nope" (available: echo)`},
		{"malformed JSON", "echo", `{"text":`, "error: invalid arguments for echo: arguments must be a JSON object"},
		{"not an object", "echo", `["text"]`, "error: invalid arguments for echo: arguments must be a JSON object"},
		{"string", "echo", `"hi"`, "error: invalid arguments for echo: arguments must be a JSON object"},
		{"missing required", "echo", `{"n":1}`, `error: invalid arguments for echo: missing required field "text"`},
		{"null required", "echo", `{"text":null}`, `error: invalid arguments for echo: missing required field "text"`},
		{"empty means {}", "echo", ``, `error: invalid arguments for echo: missing required field "text"`},
		{"null means {}", "echo", `null`, `error: invalid arguments for echo: missing required field "text"`},
		{"wrong type", "echo", `{"text":1}`, `error: invalid arguments for echo: field "text" must be a string`},
		{"not an integer", "echo", `{"text":"a","n":1.5}`, `error: invalid arguments for echo: field "n" must be a integer`},
		{"wrongly cased key", "echo", `{"TEXT":"a"}`, "error: invalid arguments for echo: unknown argument TEXT; expected text"},
		{"cased beside exact", "echo", `{"text":"a","Text":"rm -rf /"}`, "error: invalid arguments for echo: unknown argument Text; expected text"},
		{"unknown key", "echo", `{"text":"a","x":1}`, "error: invalid arguments for echo: unknown argument x; expected one of n, text"},
		{"key twice", "echo", `{"text":"a","text":"b"}`, "error: invalid arguments for echo: argument text given twice"},
		{"nested key twice", "echo", `{"text":{"o":[{"x":1,"x":2}]}}`, `error: invalid arguments for echo: argument text holds the key "x" twice in one object`},
		{"trailing data", "echo", `{"text":"a"}{}`, "error: invalid arguments for echo: arguments must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := act(t, r, tt.tool, tt.args)
			if !res.Failed || res.Output != tt.want {
				t.Errorf("got %+v, want failed %q", res, tt.want)
			}
		})
	}
}

// TestCheckArgsMatchesRun: CheckArgs refuses exactly what Run refuses, and
// a refused call never reaches the tool.
func TestCheckArgsMatchesRun(t *testing.T) {
	ran := 0
	tool := echo("echo")
	tool.run = func(_ context.Context, args json.RawMessage) (string, error) { ran++; return string(args), nil }
	r := newTestRegistry(t, Options{}, tool)
	for _, tt := range []struct {
		name, args string
		ok         bool
	}{
		{"nope", `{}`, false},
		{"echo", `{"text":"a"}`, true},
		{"echo", `{"text":"a","n":2}`, true},
		{"echo", ` {"text":"a"} `, true},
		{"echo", `{"TEXT":"a"}`, false},
		{"echo", `{"text":"a","N":2}`, false},
		{"echo", `{"text":"a","text":"b"}`, false},
		{"echo", `{"text":1}`, false},
		{"echo", `[]`, false},
		{"echo", ``, false},
	} {
		err := r.CheckArgs(context.Background(), tt.name, tt.args)
		before := ran
		_, runErr := r.Run(context.Background(), tt.name, json.RawMessage(tt.args))
		if (err == nil) != tt.ok || (runErr == nil) != tt.ok {
			t.Errorf("%s %s: CheckArgs %v, Run %v; want ok=%v", tt.name, tt.args, err, runErr, tt.ok)
		}
		if err != nil && err.Error() != runErr.Error() {
			t.Errorf("%s %s: CheckArgs says %q, Run says %q", tt.name, tt.args, err, runErr)
		}
		if !tt.ok && ran != before {
			t.Errorf("%s %s: refused but the tool ran", tt.name, tt.args)
		}
	}
	if err := r.CheckArgs(context.Background(), "nope", `{}`); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("unknown tool: %v, want ErrUnknownTool", err)
	}
	if err := r.CheckArgs(context.Background(), "echo", `{"TEXT":"a"}`); !errors.Is(err, ErrInvalidArgs) {
		t.Errorf("cased key: %v, want ErrInvalidArgs", err)
	}
}

// TestBuiltinsDecodeStrictly: each built-in tool, called directly (without
// the registry's check), refuses a wrongly cased or unknown key.
func TestBuiltinsDecodeStrictly(t *testing.T) {
	ws, err := NewWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tool Tool
		args string
	}{
		{NewWriteFile(ws), `{"PATH":"a.txt","content":"x"}`},
		{NewWriteFile(ws), `{"path":"a.txt","Content":"x"}`},
		{NewReadFile(ws), `{"Path":"a.txt"}`},
		{NewReadFile(ws), `{"path":"a.txt","content":"x"}`},
		{NewListDir(ws), `{"PATH":"."}`},
		{NewShell(ShellOptions{Workspace: ws.Dir()}), `{"Command":"echo hi > ran.txt"}`},
		{NewHTTPGet(HTTPOptions{}), `{"URL":"http://example.com"}`},
		{NewCurrentTime(nil), `{"TimeZone":"UTC"}`},
	} {
		out, err := tt.tool.Run(context.Background(), json.RawMessage(tt.args))
		if !errors.Is(err, ErrInvalidArgs) || !strings.Contains(err.Error(), "unknown argument") {
			t.Errorf("%s %s: got %q, %v; want an unknown-argument error", tt.tool.Spec().Name, tt.args, out, err)
		}
	}
	for _, name := range []string{"a.txt", "ran.txt"} {
		if _, err := os.Lstat(filepath.Join(ws.Dir(), name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after refused calls: %v", name, err)
		}
	}
}

func TestActRuns(t *testing.T) {
	r := newTestRegistry(t, Options{}, echo("echo"))
	res := act(t, r, "echo", ` {"text":"hi","n":2} `)
	if res.Failed || res.Output != `{"text":"hi","n":2}` {
		t.Errorf("got %+v", res)
	}
}

func TestEmptyArgsAreEmptyObject(t *testing.T) {
	var got []string
	tool := fakeTool{spec: Spec{Name: "noargs"}, run: func(_ context.Context, args json.RawMessage) (string, error) {
		got = append(got, string(args))
		return "ok", nil
	}}
	r := newTestRegistry(t, Options{}, tool)
	for _, args := range []string{"", "null", " null ", "{}"} {
		if res := act(t, r, "noargs", args); res.Failed {
			t.Errorf("args %q: %+v", args, res)
		}
	}
	if !slices.Equal(got, []string{"{}", "{}", "{}", "{}"}) {
		t.Errorf("tool saw %q", got)
	}
}

func TestPanicIsRecovered(t *testing.T) {
	tool := fakeTool{spec: Spec{Name: "boom"}, run: func(context.Context, json.RawMessage) (string, error) {
		var m map[string]int
		m["x"]++ // nil map write
		return "", nil
	}}
	r := newTestRegistry(t, Options{}, tool)
	res := act(t, r, "boom", "{}")
	if !res.Failed || !strings.HasPrefix(res.Output, "error: tool crashed: assignment to entry in nil map") {
		t.Errorf("got %+v", res)
	}
	if _, err := r.Run(context.Background(), "boom", nil); !errors.Is(err, ErrCrashed) {
		t.Errorf("Run error = %v, want ErrCrashed", err)
	}
}

// blocker waits for its context to end and returns some partial output.
func blocker(name string) fakeTool {
	return fakeTool{spec: Spec{Name: name, Timeout: time.Hour}, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-ctx.Done()
		return "partial", ctx.Err()
	}}
}

func TestTimeout(t *testing.T) {
	r := newTestRegistry(t, Options{Timeouts: map[string]time.Duration{"slow": 20 * time.Millisecond}}, blocker("slow"))
	res := act(t, r, "slow", "{}")
	if !res.Failed || res.Output != "partial\nerror: timed out after 20ms" {
		t.Errorf("got %+v", res)
	}
	if s, _ := r.Spec("slow"); s.Timeout != 20*time.Millisecond {
		t.Errorf("Spec timeout = %v, want the override", s.Timeout)
	}
}

func TestTimeoutAbandonsToolIgnoringContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	stubborn := fakeTool{spec: Spec{Name: "stubborn"}, run: func(context.Context, json.RawMessage) (string, error) {
		<-release
		return "late", nil
	}}
	r := newTestRegistry(t, Options{Timeouts: map[string]time.Duration{"stubborn": 10 * time.Millisecond}}, stubborn)
	r.grace = 10 * time.Millisecond
	if res := act(t, r, "stubborn", ""); !res.Failed || res.Output != "error: timed out after 10ms" {
		t.Errorf("got %+v", res)
	}
}

func TestTimeoutPrecedence(t *testing.T) {
	r := newTestRegistry(t, Options{DefaultTimeout: time.Minute, Timeouts: map[string]time.Duration{"b": time.Second}},
		fakeTool{spec: Spec{Name: "a"}}, fakeTool{spec: Spec{Name: "b", Timeout: time.Hour}},
		fakeTool{spec: Spec{Name: "c", Timeout: time.Hour}})
	for name, want := range map[string]time.Duration{"a": time.Minute, "b": time.Second, "c": time.Hour} {
		if s, ok := r.Spec(name); !ok || s.Timeout != want {
			t.Errorf("%s: timeout %v, want %v", name, s.Timeout, want)
		}
	}
}

func TestCallerCancelIsAnError(t *testing.T) {
	r := newTestRegistry(t, Options{}, blocker("slow"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := r.Act(ctx, core.Action{Kind: core.ActionTool, Call: llm.ToolCall{Name: "slow"}})
	if !errors.Is(err, context.Canceled) || !res.Failed {
		t.Errorf("got %+v, %v; want a failed result and context.Canceled", res, err)
	}
}

// TestCallerCancelSaysStopped: a run cut short by its caller (/cancel, or
// shutdown) ends its output with that, in words; it ended with Go's
// "error: slow: context canceled", shown to people in the outcome's
// output block. The error still unwraps to the context's.
func TestCallerCancelSaysStopped(t *testing.T) {
	r := newTestRegistry(t, Options{}, blocker("slow"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := r.Act(ctx, core.Action{Kind: core.ActionTool, Call: llm.ToolCall{Name: "slow"}})
	if want := "partial\nerror: slow: stopped before it finished"; res.Output != want || !res.Failed {
		t.Errorf("output %q (failed %v); want %q", res.Output, res.Failed, want)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v; want context.Canceled", err)
	}
	if _, err := r.Run(ctx, "slow", nil); !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "context canceled") {
		t.Errorf("Run: err %v; want context.Canceled, said in words", err)
	}
}

func TestActRefusesReplies(t *testing.T) {
	r := newTestRegistry(t, Options{})
	if _, err := r.Act(context.Background(), core.Action{Kind: core.ActionReply, Text: "hi"}); err == nil {
		t.Error("a reply action must be an error")
	}
}

func TestToolErrorAndFailed(t *testing.T) {
	r := newTestRegistry(t, Options{},
		fakeTool{spec: Spec{Name: "err"}, run: func(context.Context, json.RawMessage) (string, error) {
			return "", errors.New("disk full")
		}},
		fakeTool{spec: Spec{Name: "exit"}, run: func(context.Context, json.RawMessage) (string, error) {
			return "exit 3", ErrFailed
		}})
	if res := act(t, r, "err", ""); !res.Failed || res.Output != "error: disk full" {
		t.Errorf("err: %+v", res)
	}
	if res := act(t, r, "exit", ""); !res.Failed || res.Output != "exit 3" {
		t.Errorf("exit: %+v", res)
	}
}

func TestOutputCapAndRedaction(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	r := newTestRegistry(t, Options{MaxOutput: 64, Secrets: secrets.New("hunter2-secret")},
		fakeTool{spec: Spec{Name: "long"}, run: func(context.Context, json.RawMessage) (string, error) { return long, nil }},
		fakeTool{spec: Spec{Name: "leak"}, run: func(context.Context, json.RawMessage) (string, error) {
			return "pw hunter2-secret", errors.New("bad hunter2-secret")
		}})
	res := act(t, r, "long", "")
	if len(res.Output) > 64 || !strings.Contains(res.Output, "…[truncated ") || !strings.HasPrefix(res.Output, "éé") {
		t.Errorf("capped output %q (%d bytes)", res.Output, len(res.Output))
	}
	res = act(t, r, "leak", "")
	if strings.Contains(res.Output, "hunter2") || !strings.Contains(res.Output, secrets.Mask) {
		t.Errorf("secret not redacted: %q", res.Output)
	}
}

func TestRegisterRejects(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
	}{
		{"empty name", Spec{}},
		{"space in name", Spec{Name: "read file"}},
		{"long name", Spec{Name: strings.Repeat("a", 65)}},
		{"bad JSON", Spec{Name: "a", Parameters: json.RawMessage(`{`)}},
		{"not object", Spec{Name: "a", Parameters: json.RawMessage(`{"type":"string"}`)}},
		{"required not a property", Spec{Name: "a", Parameters: json.RawMessage(`{"type":"object","required":["x"]}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegistry(Options{})
			if err := r.Register(fakeTool{spec: tt.spec}); err == nil {
				t.Error("Register accepted it")
			}
			if len(r.Specs()) != 0 {
				t.Error("a refused tool is listed")
			}
		})
	}
}

func TestRegisterDuplicate(t *testing.T) {
	r := newTestRegistry(t, Options{}, echo("echo"))
	if err := r.Register(echo("echo")); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate: %v", err)
	}
}

func TestSpecsSortedAndStable(t *testing.T) {
	r := newTestRegistry(t, Options{}, echo("zeta"), fakeTool{spec: Spec{Name: "alpha"}}, echo("mid"))
	specs := r.Specs()
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"alpha", "mid", "zeta"}) {
		t.Errorf("names %v", names)
	}
	if again := r.Specs(); &again[0] != &specs[0] {
		t.Error("Specs rebuilt without a registration")
	}
	if string(specs[0].Parameters) != string(emptySchema) {
		t.Errorf("no-argument tool parameters %s", specs[0].Parameters)
	}
	if err := r.Register(echo("beta")); err != nil {
		t.Fatal(err)
	}
	if len(specs) != 3 || specs[1].Name != "mid" {
		t.Error("a slice handed out earlier changed")
	}
	if ro, known := r.ReadOnly("zeta"); !ro || !known {
		t.Errorf("ReadOnly(zeta) = %v, %v", ro, known)
	}
	if ro, known := r.ReadOnly("alpha"); ro || !known {
		t.Errorf("ReadOnly(alpha) = %v, %v", ro, known)
	}
	if _, known := r.ReadOnly("nope"); known {
		t.Error("ReadOnly(nope) known")
	}
}
