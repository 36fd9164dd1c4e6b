package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/core/tools/mcp"
	fakemcp "github.com/gatehouse-bot/gatehouse/internal/fake/mcp"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// fakeBin is the stdio fake, built once by TestMain.
var fakeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fakemcp")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if fakeBin, err = fakemcp.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// rig is a Registry with a Manager running the given servers.
type rig struct {
	reg  *tools.Registry
	mgr  *mcp.Manager
	log  *testutil.SyncBuffer
	stop func() // ends Run and waits for it
}

func start(t *testing.T, opts tools.Options, servers ...mcp.ServerConfig) *rig {
	t.Helper()
	return startPinging(t, opts, 50*time.Millisecond, servers...)
}

// startPinging is start with HTTP servers pinged every ping.
func startPinging(t *testing.T, opts tools.Options, ping time.Duration, servers ...mcp.ServerConfig) *rig {
	t.Helper()
	logs := &testutil.SyncBuffer{}
	opts.Log = zerolog.New(logs)
	reg := tools.NewRegistry(opts)
	mgr, err := mcp.New(servers, mcp.Options{Registry: reg, Secrets: opts.Secrets, Log: zerolog.New(logs).Level(zerolog.DebugLevel), MinBackoff: 50 * time.Millisecond, PingInterval: ping})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mgr.Run(ctx)
	}()
	r := &rig{reg: reg, mgr: mgr, log: logs, stop: func() { cancel(); <-done }}
	t.Cleanup(r.stop)
	return r
}

// stdio is the fake as a stdio server named name, its workspace and call
// log in a fresh directory; mark is set in its environment to find it in /proc.
func stdio(t *testing.T, name string, env map[string]string) (mcp.ServerConfig, string) {
	dir := t.TempDir()
	e := map[string]string{
		"FAKE_MCP_WORKSPACE": dir,
		"FAKE_MCP_CALLS":     filepath.Join(dir, "calls.jsonl"),
		"FAKE_MCP_MARK":      fmt.Sprintf("%s-%d", name, time.Now().UnixNano()),
	}
	for k, v := range env {
		e[k] = v
	}
	return mcp.ServerConfig{Name: name, Command: fakeBin, Env: e, Timeout: 10 * time.Second}, dir
}

func (r *rig) has(name string) bool {
	_, ok := r.reg.ReadOnly(name)
	return ok
}

func (r *rig) waitTool(t *testing.T, name string) {
	t.Helper()
	testutil.WaitFor(t, name+" offered", func() bool { return r.has(name) })
}

func (r *rig) act(t *testing.T, name, args string) core.Result {
	t.Helper()
	res, err := r.reg.Act(context.Background(), core.Action{Kind: core.ActionTool, Call: llm.ToolCall{Name: name, Args: args}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// calls reads the fake's call log.
func calls(t *testing.T, dir string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "calls.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for line := range strings.Lines(string(b)) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func TestToolsOfferedWithTheirHintsAndCalled(t *testing.T) {
	cfg, dir := stdio(t, "fake", nil)
	r := start(t, tools.Options{}, cfg)
	r.waitTool(t, "mcp__fake__lookup")
	for name, want := range map[string]bool{"mcp__fake__lookup": true, "mcp__fake__write_note": false, "mcp__fake__hang": true} {
		if ro, ok := r.reg.ReadOnly(name); !ok || ro != want {
			t.Errorf("%s: read-only %v, known %v; want read-only %v", name, ro, ok, want)
		}
	}
	spec, _ := r.reg.Spec("mcp__fake__lookup")
	if !strings.Contains(spec.Description, "MCP server fake") || spec.Timeout != 10*time.Second {
		t.Errorf("spec = %+v", spec)
	}
	if res := r.act(t, "mcp__fake__lookup", `{"key":"k1"}`); res.Failed || res.Output != "value of k1" {
		t.Errorf("lookup = %+v", res)
	}
	if res := r.act(t, "mcp__fake__write_note", `{"path":"n.txt","text":"hi"}`); res.Failed {
		t.Errorf("write_note = %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "n.txt")); err != nil || string(b) != "hi" {
		t.Errorf("note = %q, %v", b, err)
	}
	st := r.mgr.Statuses()
	if len(st) != 1 || st[0].Tools != 6 || st[0].Transport != "stdio" {
		t.Errorf("statuses = %+v", st)
	}
}

func TestArgumentsOutsideTheSchemaNeverReachTheServer(t *testing.T) {
	cfg, dir := stdio(t, "fake", nil)
	r := start(t, tools.Options{}, cfg)
	r.waitTool(t, "mcp__fake__write_note")
	for _, args := range []string{
		`{"path":"../escape","text":"x"}`,         // pattern
		`{"path":"a.txt"}`,                        // required
		`{"path":"a.txt","text":"x","mode":"rw"}`, // additionalProperties: false
		`{"path":"` + strings.Repeat("a", 65) + `","text":"x"}`,
	} {
		err := r.reg.CheckArgs(context.Background(), "mcp__fake__write_note", args)
		if !errors.Is(err, tools.ErrInvalidArgs) {
			t.Errorf("CheckArgs(%s) = %v, want ErrInvalidArgs", args, err)
		}
		if res := r.act(t, "mcp__fake__write_note", args); !res.Failed {
			t.Errorf("Act(%s) = %+v, want failed", args, res)
		}
	}
	if c := calls(t, dir); len(c) != 0 {
		t.Errorf("the server saw %v", c)
	}
}

func TestErrorResultIsAFailure(t *testing.T) {
	cfg, _ := stdio(t, "fake", nil)
	r := start(t, tools.Options{}, cfg)
	r.waitTool(t, "mcp__fake__fail")
	res := r.act(t, "mcp__fake__fail", `{}`)
	if !res.Failed || !strings.Contains(res.Output, "the fake failed on purpose") || !strings.Contains(res.Output, "error: ") {
		t.Errorf("fail = %+v", res)
	}
}

func TestHangingCallTimesOutAndTheServerStaysUsable(t *testing.T) {
	cfg, dir := stdio(t, "fake", nil)
	r := start(t, tools.Options{Timeouts: map[string]time.Duration{"mcp__fake__hang": 300 * time.Millisecond}}, cfg)
	r.waitTool(t, "mcp__fake__hang")
	res := r.act(t, "mcp__fake__hang", `{}`)
	if !res.Failed || !strings.Contains(res.Output, "timed out") {
		t.Fatalf("hang = %+v", res)
	}
	// The server was told (notifications/cancelled) and its handler ended.
	testutil.WaitFor(t, "the hang cancelled on the server", func() bool {
		for _, c := range calls(t, dir) {
			if c["cancelled"] == true {
				return true
			}
		}
		return false
	})
	if res := r.act(t, "mcp__fake__lookup", `{"key":"after"}`); res.Failed || res.Output != "value of after" {
		t.Errorf("lookup after the hang = %+v", res)
	}
}

func TestCancelledCallIsCancelledOnTheServer(t *testing.T) {
	cfg, dir := stdio(t, "fake", nil)
	r := start(t, tools.Options{}, cfg)
	r.waitTool(t, "mcp__fake__hang")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.reg.Act(ctx, core.Action{Kind: core.ActionTool, Call: llm.ToolCall{Name: "mcp__fake__hang", Args: `{}`}})
		done <- err
	}()
	testutil.WaitFor(t, "the hang running", func() bool { return len(calls(t, dir)) > 0 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Act = %v, want context.Canceled", err)
	}
	testutil.WaitFor(t, "the hang cancelled on the server", func() bool {
		c := calls(t, dir)
		return len(c) == 2 && c[1]["cancelled"] == true
	})
}

func TestKilledServerComesBack(t *testing.T) {
	cfg, _ := stdio(t, "fake", nil)
	mark := "FAKE_MCP_MARK=" + cfg.Env["FAKE_MCP_MARK"]
	r := start(t, tools.Options{}, cfg)
	r.waitTool(t, "mcp__fake__lookup")
	pids := testutil.ProcsWithEnv(mark)
	if len(pids) != 1 {
		t.Fatalf("fake processes: %v", pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "a new server process with its tools", func() bool {
		p := testutil.ProcsWithEnv(mark)
		return len(p) == 1 && p[0] != pids[0] && r.has("mcp__fake__lookup") && r.mgr.Statuses()[0].Tools == 6
	})
	if res := r.act(t, "mcp__fake__lookup", `{"key":"again"}`); res.Failed || res.Output != "value of again" {
		t.Errorf("lookup after the restart = %+v", res)
	}
	if !strings.Contains(r.log.String(), "its tools are withdrawn") {
		t.Errorf("no withdrawal logged:\n%s", r.log.String())
	}
}

func TestFailingServerLeavesTheOthersRunning(t *testing.T) {
	bad, _ := stdio(t, "bad", map[string]string{"FAKE_MCP_FAIL_START": "1"})
	missing := mcp.ServerConfig{Name: "missing", Command: filepath.Join(t.TempDir(), "no-such-server")}
	good, _ := stdio(t, "good", nil)
	r := start(t, tools.Options{}, bad, missing, good)
	r.waitTool(t, "mcp__good__lookup")
	testutil.WaitFor(t, "both failures logged", func() bool {
		l := r.log.String()
		return strings.Contains(l, "failing to start on purpose") && strings.Contains(l, "no-such-server")
	})
	// The child's stderr is logged as it comes, before its start is
	// given up: the failed states follow (each between its retries).
	var failed [2]bool
	testutil.WaitFor(t, "both servers shown as failed", func() bool {
		st := r.mgr.Statuses()
		for i := range failed {
			failed[i] = failed[i] || strings.HasPrefix(st[i].State, "failed: ")
		}
		return failed[0] && failed[1]
	})
	if st := r.mgr.Statuses(); st[2].Tools != 6 {
		t.Errorf("statuses = %+v", st)
	}
	for _, s := range r.reg.Specs() {
		if strings.HasPrefix(s.Name, "mcp__bad__") {
			t.Errorf("offered %s", s.Name)
		}
	}
}

func TestListChangedAddsATool(t *testing.T) {
	cfg, _ := stdio(t, "fake", nil)
	r := start(t, tools.Options{}, cfg)
	r.waitTool(t, "mcp__fake__grow")
	if r.has("mcp__fake__extra") {
		t.Fatal("extra offered before grow")
	}
	if res := r.act(t, "mcp__fake__grow", `{}`); res.Failed {
		t.Fatalf("grow = %+v", res)
	}
	r.waitTool(t, "mcp__fake__extra")
	if res := r.act(t, "mcp__fake__extra", `{}`); res.Output != "extra here" {
		t.Errorf("extra = %+v", res)
	}
}

func TestNoChildAfterShutdown(t *testing.T) {
	a, _ := stdio(t, "one", nil)
	b, _ := stdio(t, "two", nil)
	r := start(t, tools.Options{}, a, b)
	r.waitTool(t, "mcp__one__lookup")
	r.waitTool(t, "mcp__two__lookup")
	marks := []string{"FAKE_MCP_MARK=" + a.Env["FAKE_MCP_MARK"], "FAKE_MCP_MARK=" + b.Env["FAKE_MCP_MARK"]}
	for _, m := range marks {
		if len(testutil.ProcsWithEnv(m)) != 1 {
			t.Fatalf("no process with %s", m)
		}
	}
	r.stop() // Run has returned
	for _, m := range marks {
		if p := testutil.ProcsWithEnv(m); len(p) != 0 {
			t.Errorf("left running after shutdown: %v (%s)", p, m)
		}
	}
	if len(r.reg.Specs()) != 0 {
		t.Errorf("tools left: %v", r.reg.Specs())
	}
}

func TestChildEnvironmentIsExactlyItsOwn(t *testing.T) {
	t.Setenv("GATEHOUSE_MCP_TEST_TOKEN", "bot-secret-value")
	cfg, _ := stdio(t, "fake", map[string]string{"API_TOKEN": "server-secret-value"})
	r := start(t, tools.Options{Secrets: secrets.New("server-secret-value")}, cfg)
	r.waitTool(t, "mcp__fake__env")
	if res := r.act(t, "mcp__fake__env", `{"name":"GATEHOUSE_MCP_TEST_TOKEN"}`); res.Output != "(unset)" {
		t.Errorf("the bot's variable reached the server: %+v", res)
	}
	if res := r.act(t, "mcp__fake__env", `{"name":"PATH"}`); res.Output != os.Getenv("PATH") {
		t.Errorf("PATH = %+v", res)
	}
	res := r.act(t, "mcp__fake__env", `{"name":"API_TOKEN"}`)
	if strings.Contains(res.Output, "server-secret-value") || res.Output == "" {
		t.Errorf("the secret was not redacted: %+v", res)
	}
}

func TestStreamableHTTPServerWithHeaders(t *testing.T) {
	dir := t.TempDir()
	ts := httptest.NewServer(fakemcp.Handler(fakemcp.Options{Workspace: dir}, "Authorization", "Bearer hdr-secret"))
	t.Cleanup(ts.Close) // after the manager stops (cleanups run last first): its GET stream holds a connection
	good := mcp.ServerConfig{Name: "web", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer hdr-secret"}}
	bad := mcp.ServerConfig{Name: "nokey", URL: ts.URL, StartTimeout: 5 * time.Second}
	r := start(t, tools.Options{}, good, bad)
	r.waitTool(t, "mcp__web__lookup")
	if res := r.act(t, "mcp__web__lookup", `{"key":"h"}`); res.Output != "value of h" {
		t.Errorf("lookup = %+v", res)
	}
	testutil.WaitFor(t, "the server without the header refused", func() bool {
		return strings.HasPrefix(r.mgr.Statuses()[1].State, "failed: ")
	})
	if st := r.mgr.Statuses(); st[0].Transport != "http" {
		t.Errorf("statuses = %+v", st)
	}
}

// TestGoneHTTPServerHasItsToolsWithdrawn: a Streamable HTTP server
// without a standalone SSE stream (405 to the GET, as the spec allows)
// that went away kept its tools offered and "running" in /status for as
// long as the bot ran: nothing read from it, and a request that cannot
// reach the server does not end the session. The server is now pinged.
func TestGoneHTTPServerHasItsToolsWithdrawn(t *testing.T) {
	h := fakemcp.Handler(fakemcp.Options{Workspace: t.TempDir()}, "", "")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			http.Error(w, "no standalone stream", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	}))
	r := start(t, tools.Options{}, mcp.ServerConfig{Name: "web", URL: ts.URL})
	r.waitTool(t, "mcp__web__lookup")
	ts.CloseClientConnections()
	ts.Close()
	testutil.WaitFor(t, "the gone server's tools withdrawn", func() bool { return !r.has("mcp__web__lookup") })
	if st := r.mgr.Statuses()[0]; strings.HasPrefix(st.State, "running") {
		t.Errorf("status = %+v", st)
	}
}

func TestProbe(t *testing.T) {
	cfg, _ := stdio(t, "fake", nil)
	names, err := mcp.Probe(context.Background(), cfg, zerolog.Nop(), nil)
	if err != nil || len(names) != 6 {
		t.Errorf("Probe = %v, %v", names, err)
	}
	if p := testutil.ProcsWithEnv("FAKE_MCP_MARK=" + cfg.Env["FAKE_MCP_MARK"]); len(p) != 0 {
		t.Errorf("Probe left %v running", p)
	}
	bad, _ := stdio(t, "bad", map[string]string{"FAKE_MCP_FAIL_START": "1"})
	if _, err := mcp.Probe(context.Background(), bad, zerolog.Nop(), nil); err == nil || !strings.Contains(err.Error(), "on purpose") {
		t.Errorf("Probe of a failing server = %v", err)
	}
}

// TestHeadersStayWithTheConfiguredServer: the configured headers were
// added by the transport to every request, a redirect's too, so a server
// (or anything on its path) answering 307 to another host received the
// Authorization header — which net/http itself strips on such a redirect.
// They go to the configured scheme and host only.
func TestHeadersStayWithTheConfiguredServer(t *testing.T) {
	var mu sync.Mutex
	var seen []string // Authorization headers the other host received
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(other.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	cfg := mcp.ServerConfig{Name: "moved", URL: redirect.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer hdr-secret"}, StartTimeout: 5 * time.Second}
	r := start(t, tools.Options{}, cfg)
	testutil.WaitFor(t, "the redirected start failed", func() bool {
		return strings.HasPrefix(r.mgr.Statuses()[0].State, "failed: ")
	})
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the redirect was not followed")
	}
	for _, h := range seen {
		if strings.Contains(h, "hdr-secret") {
			t.Errorf("the other host received Authorization: %q", h)
		}
	}
}

// TestDescriptionsAndSchemasAreRedacted: what a server says of its tools
// went to the LLM as it was, in every request, while its results were
// redacted; a server that names its configuration there ("connected with
// token …") handed the model its env's secrets.
func TestDescriptionsAndSchemasAreRedacted(t *testing.T) {
	cfg, _ := stdio(t, "fake", map[string]string{"API_TOKEN": "server-secret-value", "FAKE_MCP_NOTE": " Connected with server-secret-value."})
	r := start(t, tools.Options{Secrets: secrets.New("server-secret-value")}, cfg)
	r.waitTool(t, "mcp__fake__lookup")
	for _, s := range r.reg.Specs() {
		if s.Name != "mcp__fake__lookup" {
			continue
		}
		if strings.Contains(s.Description, "server-secret-value") || !strings.Contains(s.Description, secrets.Mask) {
			t.Errorf("description = %q", s.Description)
		}
		if strings.Contains(string(s.Parameters), "server-secret-value") || !strings.Contains(string(s.Parameters), secrets.Mask) {
			t.Errorf("parameters = %s", s.Parameters)
		}
	}
	if res := r.act(t, "mcp__fake__lookup", `{"key":"k"}`); res.Output != "value of k" {
		t.Errorf("lookup = %+v", res)
	}
}

// TestFailureStateIsRedactedBeforeItIsCut: /status cut a failed server's
// state (its error, with the child's stderr) at 200 runes, and the reply
// was redacted after: a secret the cut fell inside lost its tail, and its
// head, no longer the whole secret, reached the chat. The state is
// redacted first.
func TestFailureStateIsRedactedBeforeItIsCut(t *testing.T) {
	const secret = "tok-secret-1234567890abcdef"
	probe, _ := stdio(t, "bad", map[string]string{"FAKE_MCP_FAIL_START": "MARK"})
	_, err := mcp.Probe(context.Background(), probe, zerolog.Nop(), nil)
	if err == nil || !strings.Contains(err.Error(), "MARK") {
		t.Fatalf("Probe = %v", err)
	}
	// The secret starts 17 runes before the cut in "failed: " + the error.
	at := len("failed: ") + strings.Index(err.Error(), "MARK")
	pad := strings.Repeat("x", 183-at-1)
	bad, _ := stdio(t, "bad", map[string]string{"FAKE_MCP_FAIL_START": pad + " " + secret})
	r := start(t, tools.Options{Secrets: secrets.New(secret)}, bad)
	testutil.WaitFor(t, "the failure in the status", func() bool {
		return strings.HasPrefix(r.mgr.Statuses()[0].State, "failed: ")
	})
	line := r.mgr.StatusLines(context.Background(), core.Conversation{})[0]
	if strings.Contains(line, secret[:8]) {
		t.Errorf("StatusLines = %q: the head of the secret", line)
	}
}
