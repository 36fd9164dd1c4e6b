package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/core/tools/mcp"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// The reference MCP servers (github.com/modelcontextprotocol/servers, on
// npm), at the versions the tests run: the newest that run on Node 20.
// Bump them here; the cache keeps one install per pair of versions.
var referencePackages = map[string]string{
	"@modelcontextprotocol/server-everything": "2026.8.31",
	"@modelcontextprotocol/server-filesystem": "2026.8.31",
}

// installTimeout bounds the one npm install of a `go test`.
const installTimeout = 5 * time.Minute

var (
	refOnce    sync.Once
	refNode    string // node's path
	refModules string // the node_modules directory holding the servers
	refErr     error
)

// referenceServer returns node's path and the script of the reference
// server pkg, installing the servers with npm once per `go test`. Without
// node or npm, or when the install fails, the test skips, or fails in CI
// (CI is set: .ci/run).
func referenceServer(t *testing.T, pkg string) (node, script string) {
	t.Helper()
	refOnce.Do(func() { refNode, refModules, refErr = installReference() })
	if refErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the reference MCP servers: %v", refErr)
		}
		t.Skipf("the reference MCP servers are not there (%v): the tests against them are skipped", refErr)
	}
	return refNode, filepath.Join(refModules, pkg, "dist", "index.js")
}

// installReference installs referencePackages into a directory of the
// test cache named by their versions, unless they are there already: into
// a fresh directory renamed into place, so that two `go test` at once
// never share a half-done install.
func installReference() (node, modules string, err error) {
	node, err = exec.LookPath("node")
	if err != nil {
		return "", "", fmt.Errorf("no node on PATH: %w", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", "", fmt.Errorf("no npm on PATH: %w", err)
	}
	base := os.Getenv("GATEHOUSE_TEST_CACHE")
	if base == "" {
		if base, err = os.UserCacheDir(); err != nil {
			return "", "", fmt.Errorf("no cache directory (set GATEHOUSE_TEST_CACHE): %w", err)
		}
		base = filepath.Join(base, "gatehouse-test")
	}
	var args []string
	name := "mcp"
	for _, pkg := range slices.Sorted(maps.Keys(referencePackages)) {
		v := referencePackages[pkg]
		args = append(args, pkg+"@"+v)
		name += "-" + filepath.Base(pkg) + "-" + v
	}
	dir := filepath.Join(base, "npm", name)
	if installed(dir) {
		return node, filepath.Join(dir, "node_modules"), nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", "", fmt.Errorf("test cache: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".install-")
	if err != nil {
		return "", "", fmt.Errorf("test cache: %w", err)
	}
	defer os.RemoveAll(tmp) // gone once renamed
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, append([]string{"install", "--no-audit", "--no-fund", "--prefer-offline", "--prefix", tmp}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("npm install %s: %w: %s", strings.Join(args, " "), err, lastBytes(out, 2000))
	}
	if err := os.Rename(tmp, dir); err != nil && !installed(dir) {
		return "", "", fmt.Errorf("test cache: %w", err)
	}
	return node, filepath.Join(dir, "node_modules"), nil
}

// installed reports whether dir holds referencePackages at their versions.
func installed(dir string) bool {
	for pkg, v := range referencePackages {
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
		var p struct{ Version string }
		if err != nil || json.Unmarshal(b, &p) != nil || p.Version != v {
			return false
		}
	}
	return true
}

func lastBytes(b []byte, n int) string {
	return string(b[max(0, len(b)-n):])
}

// everythingTools are the tools server-everything offers a client with no
// roots, sampling or elicitation, but simulate-research-query: it is a
// task (execution.taskSupport "required"), which this client does not
// speak, and so is not offered.
var everythingTools = []string{
	"echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
	"get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
	"toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
}

// checkEverything checks server-everything's tools through the Registry,
// as the bot calls them.
func checkEverything(t *testing.T, r *rig) {
	t.Helper()
	r.waitTool(t, "mcp__everything__echo")
	want := map[string]bool{}
	for _, name := range everythingTools {
		want["mcp__everything__"+name] = true
	}
	var got []string
	for _, s := range r.reg.Specs() {
		if strings.HasPrefix(s.Name, "mcp__") {
			got = append(got, s.Name)
			if !want[s.Name] {
				t.Errorf("offered %s, not a tool of server-everything this client can call", s.Name)
			}
			delete(want, s.Name)
		}
	}
	if len(want) != 0 {
		t.Errorf("not offered: %v (offered %v)", want, got)
	}
	if ro, _ := r.reg.ReadOnly("mcp__everything__echo"); !ro {
		t.Error("echo is not read-only; its readOnlyHint is true")
	}
	if res := r.act(t, "mcp__everything__echo", `{"message":"hello from gatehouse"}`); res.Failed || res.Output != "Echo: hello from gatehouse" {
		t.Errorf("echo = %+v", res)
	}
	if res := r.act(t, "mcp__everything__get-sum", `{"a":2,"b":40}`); res.Failed || res.Output != "The sum of 2 and 40 is 42." {
		t.Errorf("get-sum = %+v", res)
	}
	checkEverythingContent(t, r)
	for _, c := range []struct{ tool, args string }{
		{"get-sum", `{"a":"2","b":40}`}, {"get-sum", `{"a":2}`}, {"get-sum", `{"message":"x"}`},
		{"get-resource-links", `{"count":11}`}, {"get-annotated-message", `{"messageType":"warning"}`},
	} {
		name := "mcp__everything__" + c.tool
		if err := r.reg.CheckArgs(context.Background(), name, c.args); !errors.Is(err, tools.ErrInvalidArgs) {
			t.Errorf("CheckArgs(%s, %s) = %v, want ErrInvalidArgs", c.tool, c.args, err)
		}
		if res := r.act(t, name, c.args); !res.Failed {
			t.Errorf("%s(%s) = %+v, want refused", c.tool, c.args, res)
		}
	}
	// Within the schema, refused by the server: the model reads why.
	if res := r.act(t, "mcp__everything__get-resource-reference", `{"resourceType":"Text","resourceId":0}`); !res.Failed || !strings.Contains(res.Output, "Invalid resourceId: 0") {
		t.Errorf("get-resource-reference of resource 0 = %+v", res)
	}
	// A call that outlives its timeout is cancelled; the session goes on.
	if res := r.act(t, "mcp__everything__trigger-long-running-operation", `{"duration":30,"steps":2}`); !res.Failed {
		t.Errorf("a 30 s operation with a short timeout = %+v", res)
	}
	// The server's log messages come unasked (on stdio between the
	// answers, over HTTP on its GET stream) and change nothing.
	if res := r.act(t, "mcp__everything__toggle-simulated-logging", `{}`); res.Failed {
		t.Errorf("toggle-simulated-logging = %+v", res)
	}
	if res := r.act(t, "mcp__everything__echo", `{"message":"still here"}`); res.Failed || res.Output != "Echo: still here" {
		t.Errorf("echo after a timeout and log messages = %+v", res)
	}
	if s := r.log.String(); strings.Contains(s, `"level":"warn"`) || strings.Contains(s, `"level":"error"`) {
		t.Errorf("log:\n%s", s)
	}
}

// checkEverythingContent checks how the kinds of content server-everything
// answers with read for the model.
func checkEverythingContent(t *testing.T, r *rig) {
	t.Helper()
	if res := r.act(t, "mcp__everything__get-tiny-image", `{}`); res.Failed || !strings.Contains(res.Output, "[image image/png, ") {
		t.Errorf("get-tiny-image = %+v", res)
	}
	if res := r.act(t, "mcp__everything__get-structured-content", `{"location":"Chicago"}`); res.Failed || !strings.Contains(res.Output, `"temperature"`) {
		t.Errorf("get-structured-content = %+v", res)
	}
	if res := r.act(t, "mcp__everything__get-resource-links", `{"count":2}`); res.Failed || strings.Count(res.Output, "[resource link ") != 2 {
		t.Errorf("get-resource-links = %+v", res)
	}
	if res := r.act(t, "mcp__everything__get-resource-reference", `{"resourceType":"Text","resourceId":3}`); res.Failed ||
		!strings.Contains(res.Output, "(text/plain)]\nResource 3: This is a plaintext resource") {
		t.Errorf("get-resource-reference = %+v", res)
	}
	if res := r.act(t, "mcp__everything__get-annotated-message", `{"messageType":"error","includeImage":true}`); res.Failed ||
		!strings.Contains(res.Output, "Error: Operation failed") || !strings.Contains(res.Output, "[image image/png, ") {
		t.Errorf("get-annotated-message = %+v", res)
	}
}

// everythingOptions time trigger-long-running-operation out soon.
var everythingOptions = tools.Options{Timeouts: map[string]time.Duration{"mcp__everything__trigger-long-running-operation": 500 * time.Millisecond}}

// TestReferenceEverythingOverStdio runs server-everything as a stdio child.
func TestReferenceEverythingOverStdio(t *testing.T) {
	node, script := referenceServer(t, "@modelcontextprotocol/server-everything")
	r := start(t, everythingOptions, mcp.ServerConfig{Name: "everything", Command: node, Args: []string{script, "stdio"}, Timeout: 20 * time.Second})
	checkEverything(t, r)
	// It adds simulate-research-query once initialised and says so with
	// notifications/tools/list_changed (over HTTP that may come before
	// its GET stream is open, and be lost: the first list has it anyway).
	testutil.WaitFor(t, "server-everything's tools/list_changed read", func() bool {
		return strings.Contains(r.log.String(), "mcp tool list changed")
	})
	if st := r.mgr.Statuses(); len(st) != 1 || st[0].Transport != "stdio" || st[0].Tools != len(everythingTools) {
		t.Errorf("statuses = %+v", st)
	}
}

// TestReferenceEverythingOverStreamableHTTP runs server-everything's
// Streamable HTTP server on a free loopback port.
func TestReferenceEverythingOverStreamableHTTP(t *testing.T) {
	node, script := referenceServer(t, "@modelcontextprotocol/server-everything")
	url := serveHTTP(t, node, script, "streamableHttp")
	r := startPinging(t, everythingOptions, time.Hour, mcp.ServerConfig{Name: "everything", URL: url, Timeout: 20 * time.Second})
	checkEverything(t, r)
	if st := r.mgr.Statuses(); len(st) != 1 || st[0].Transport != "http" || st[0].Tools != len(everythingTools) {
		t.Errorf("statuses = %+v", st)
	}
}

// serveHTTP starts server-everything in mode on a free port in its own
// process group, waits until it answers, and kills the group when the test
// ends; it returns the endpoint's URL.
func serveHTTP(t *testing.T, node, script, mode string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(node, script, mode)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	out := &testutil.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() {
			t.Logf("server-everything %s said:\n%s", mode, lastBytes([]byte(out.String()), 4000))
		}
	})
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	testutil.WaitFor(t, "server-everything answering on "+url, func() bool {
		select {
		case <-exited:
			t.Fatalf("server-everything %s exited:\n%s", mode, out.String())
		default:
		}
		resp, err := http.Get(url) // 400 without a session: it answers
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})
	return url
}

// TestReferenceFilesystem runs server-filesystem as a stdio child on a
// temporary directory: a file in it is read, one outside is refused by the
// server, and arguments off the schema by the validator.
func TestReferenceFilesystem(t *testing.T) {
	node, script := referenceServer(t, "@modelcontextprotocol/server-filesystem")
	root, outside := t.TempDir(), t.TempDir()
	inside := filepath.Join(root, "note.txt")
	if err := os.WriteFile(inside, []byte("the note's text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("not for the model"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := start(t, tools.Options{}, mcp.ServerConfig{Name: "fs", Command: node, Args: []string{script, root}, Timeout: 20 * time.Second})
	r.waitTool(t, "mcp__fs__read_text_file")
	for name, want := range map[string]bool{"mcp__fs__read_file": true, "mcp__fs__list_directory": true, "mcp__fs__write_file": false, "mcp__fs__move_file": false} {
		if ro, ok := r.reg.ReadOnly(name); !ok || ro != want {
			t.Errorf("%s: read-only %v, known %v; want read-only %v", name, ro, ok, want)
		}
	}
	for _, name := range []string{"mcp__fs__read_file", "mcp__fs__read_text_file"} {
		res := r.act(t, name, fmt.Sprintf(`{"path":%q}`, inside))
		if res.Failed || res.Output != "the note's text\n" { // its structured content says the same
			t.Errorf("%s = %+v", name, res)
		}
	}
	res := r.act(t, "mcp__fs__read_text_file", fmt.Sprintf(`{"path":%q}`, secret))
	if !res.Failed || strings.Contains(res.Output, "not for the model") || !strings.Contains(res.Output, "Access denied") {
		t.Errorf("read_text_file outside the allowed directory = %+v", res)
	}
	res = r.act(t, "mcp__fs__read_text_file", fmt.Sprintf(`{"path":%q,"head":1,"tail":1}`, inside))
	if !res.Failed || !strings.Contains(res.Output, "Cannot specify both head and tail") {
		t.Errorf("read_text_file with head and tail = %+v", res)
	}
	if res := r.act(t, "mcp__fs__write_file", fmt.Sprintf(`{"path":%q,"content":"written"}`, filepath.Join(root, "new.txt"))); res.Failed {
		t.Errorf("write_file = %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(root, "new.txt")); err != nil || !bytes.Equal(b, []byte("written")) {
		t.Errorf("new.txt = %q, %v", b, err)
	}
	for _, args := range []string{`{}`, `{"path":42}`, fmt.Sprintf(`{"path":%q,"head":"one"}`, inside)} {
		if err := r.reg.CheckArgs(context.Background(), "mcp__fs__read_text_file", args); !errors.Is(err, tools.ErrInvalidArgs) {
			t.Errorf("CheckArgs(read_text_file, %s) = %v, want ErrInvalidArgs", args, err)
		}
	}
}
