package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// post sends an empty POST to http://addr/path and returns the status and
// body.
func post(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	c := http.Client{Timeout: 20 * time.Second}
	resp, err := c.Post("http://"+addr+path, "text/plain", nil)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// reloadGauges returns the two reload metrics.
func reloadGauges(t *testing.T, addr string) (ok, at float64) {
	t.Helper()
	fams := scrape(t, addr)
	ok, found := value(fams, "gatehouse_config_last_reload_successful", nil)
	at, found2 := value(fams, "gatehouse_config_last_reload_success_timestamp_seconds", nil)
	if !found || !found2 {
		t.Fatal("a reload metric is missing from /metrics")
	}
	return ok, at
}

// TestReloadThroughTheBinary: a SIGHUP with a changed policy takes effect
// for the next message (a held shell call is now allowed and runs); an
// invalid file is rejected by SIGHUP and by POST /-/reload (500 with the
// error naming the key) and the running policy stays; POST /-/reload of a
// good file answers 200 and the policy changes back; GET is 405; the
// reload metrics follow each step; a changed key that needs a restart is
// logged by name, without its value.
func TestReloadThroughTheBinary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := startFake(t, scriptedModel("run it", "echo ran >> ran.txt"))
	addr := freeAddr(t)
	config := func(policy, apiKey string) string {
		return strings.Replace(fakeConfig(srv.URL(), apiKey, policy, "info"), `listen: ""`, "listen: "+addr, 1)
	}
	const (
		approve = `    - {tool: shell, decision: approve}`
		allow   = `    - {tool: shell, decision: allow}`
		invalid = `    - {tool: shell, decision: maybe}`
	)
	writeFile(t, dir, "config.yaml", config(approve, "sk-reload-old"))
	p := startBot(t, dir, baseEnv(dir))
	ran := filepath.Join(dir, "workspace", "ran.txt")
	hup := func() {
		t.Helper()
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	logged := func(what string, n int) {
		t.Helper()
		testutil.WaitFor(t, what+" logged", func() bool { return strings.Count(p.stderr.String(), what) >= n })
	}

	testutil.WaitFor(t, "/healthz", func() bool { code, _ := get(addr, "/healthz"); return code == http.StatusOK })
	ok0, at0 := reloadGauges(t, addr)
	if ok0 != 1 || at0 < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("at start-up: successful=%v timestamp=%v; want 1 and the start time", ok0, at0)
	}
	p.send("run it")
	expectToken(t, p) // held
	if readFile(t, ran) != "" {
		t.Fatal("the held command ran")
	}

	// SIGHUP with shell allowed (and a new API key, which needs a restart).
	writeFile(t, dir, "config.yaml", config(allow, "sk-reload-new"))
	hup()
	logged("config reloaded", 1)
	logged("llm.providers[0].api_key changed; needs a restart", 1)
	if strings.Contains(p.stderr.String(), "sk-reload-new") {
		t.Error("the log shows the new API key")
	}
	p.send("run it")
	waitFile(t, ran, func(s string) bool { return s == "ran\n" })

	// SIGHUP with an invalid file: rejected, shell stays allowed.
	writeFile(t, dir, "config.yaml", config(invalid, "sk-reload-new"))
	hup()
	logged("config reload rejected", 1)
	if !strings.Contains(p.stderr.String(), "policy.rules[0]") {
		t.Errorf("the rejection does not name the key:\n%s", tail(p.stderr.String(), 2000))
	}
	if ok, at := reloadGauges(t, addr); ok != 0 || at < at0 {
		t.Errorf("after a rejected reload: successful=%v timestamp=%v; want 0 and the last success's", ok, at)
	}
	p.send("run it")
	waitFile(t, ran, func(s string) bool { return s == "ran\nran\n" })

	// POST /-/reload: the invalid file again is 500 with the error text.
	code, body := post(t, addr, "/-/reload")
	if code != http.StatusInternalServerError || !strings.Contains(body, "policy.rules[0]") {
		t.Errorf("POST /-/reload of an invalid file: %d %q; want 500 naming policy.rules[0]", code, body)
	}
	if c, _ := get(addr, "/-/reload"); c != http.StatusMethodNotAllowed {
		t.Errorf("GET /-/reload: %d, want 405", c)
	}

	// POST /-/reload of a good file: 200, shell is held again.
	writeFile(t, dir, "config.yaml", config(approve, "sk-reload-new"))
	if code, body := post(t, addr, "/-/reload"); code != http.StatusOK {
		t.Fatalf("POST /-/reload: %d %q; want 200", code, body)
	}
	if ok, at := reloadGauges(t, addr); ok != 1 || at < at0 {
		t.Errorf("after a good reload: successful=%v timestamp=%v; want 1 and a time ≥ the start's", ok, at)
	}
	p.send("run it")
	expectToken(t, p)
	if got := readFile(t, ran); got != "ran\nran\n" {
		t.Errorf("ran.txt = %q after the policy went back to approve", got)
	}
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestToolsShowsTheReloadedPolicy: /tools shows the decision of the
// policy in force. It read the rules as first loaded, so after a reload
// that allowed shell it still said "approve".
func TestToolsShowsTheReloadedPolicy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const approve, allow = "{tool: shell, decision: approve}", "{tool: shell, decision: allow}"
	cfg := offlineConfig(t)
	if !strings.Contains(cfg, approve) {
		t.Fatalf("the shipped config.yaml no longer has %q; update this test", approve)
	}
	writeFile(t, dir, "config.yaml", cfg)
	p := startBot(t, dir, baseEnv(dir))
	p.send("/tools")
	expectLine(t, p, "shell — built-in — approve")

	writeFile(t, dir, "config.yaml", strings.Replace(cfg, approve, allow, 1))
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "config reloaded", func() bool { return strings.Contains(p.stderr.String(), "config reloaded") })
	p.send("/tools")
	expectLine(t, p, "shell — built-in — allow")
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
}
