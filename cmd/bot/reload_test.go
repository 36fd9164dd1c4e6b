package main

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// post sends an empty POST to http://addr/path, as `curl -X POST` does
// (no Content-Type), and returns the status and body.
func post(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	return postWith(t, addr, path, nil)
}

// postWith sends an empty POST to http://addr/path with the headers in
// header (name, value pairs) and returns the status and body.
func postWith(t *testing.T, addr, path string, header []string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	c := http.Client{Timeout: 20 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: reading the answer: %v", path, err)
	}
	return resp.StatusCode, string(body)
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
		return strings.Replace(fakeConfig(srv.URL(), apiKey, policy, "info"), `listen: ""`, "listen: "+addr+"\n  reload: true", 1)
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

// TestReloadEndpointIsOffUnlessEnabledAndRefusesCrossSite: POST /-/reload
// is refused (403) unless http.reload is true, while SIGHUP always
// reloads; when on, it refuses what a web page in a browser on the bot's
// host could send it (an Origin, a Sec-Fetch-Site other than same-origin
// or none, a form's content type) and accepts a plain POST as curl sends
// it. It accepted a body-less text/plain POST from any Origin, and was on
// whenever http.listen was.
func TestReloadEndpointIsOffUnlessEnabledAndRefusesCrossSite(t *testing.T) {
	t.Parallel()
	reloads := func(p *botProc) int { return strings.Count(p.stderr.String(), "config reloaded") }
	const shipped = "\n  reload: false " // followed by its comment
	start := func(reload string) (*botProc, string) {
		t.Helper()
		dir, addr := t.TempDir(), freeAddr(t)
		cfg := listenConfig(t, addr)
		if !strings.Contains(cfg, shipped) {
			t.Fatalf("the shipped config.yaml no longer has %q; update this test", shipped)
		}
		writeFile(t, dir, "config.yaml", strings.Replace(cfg, shipped, reload, 1))
		p := startBot(t, dir, baseEnv(dir))
		testutil.WaitFor(t, "/healthz", func() bool { code, _ := get(addr, "/healthz"); return code == http.StatusOK })
		return p, addr
	}
	off, offAddr := start("\n ") // the key left out: off by default
	on, onAddr := start("\n  reload: true ")

	// Off by default: refused, saying how to turn it on; SIGHUP works.
	if code, body := post(t, offAddr, "/-/reload"); code != http.StatusForbidden || !strings.Contains(body, "http.reload") {
		t.Errorf("POST /-/reload without http.reload: %d %q; want 403 naming http.reload", code, body)
	}
	if n := reloads(off); n != 0 {
		t.Errorf("POST /-/reload without http.reload reloaded (%d)", n)
	}
	if err := off.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "SIGHUP's reload", func() bool { return reloads(off) == 1 })

	// On: what a browser could send from another site is refused.
	origin := "http://" + onAddr
	for _, h := range [][]string{
		{"Content-Type", "text/plain"},
		{"Content-Type", "text/plain;charset=UTF-8"},
		{"Content-Type", "application/x-www-form-urlencoded"},
		{"Content-Type", "Multipart/Form-Data; boundary=x"},
		{"Origin", "http://evil.example"},
		{"Origin", origin},
		{"Origin", "null"},
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
		{"Sec-Fetch-Site", "same-origin", "Origin", "http://evil.example"},
		{"Sec-Fetch-Site", "none", "Content-Type", "text/plain"},
	} {
		if code, body := postWith(t, onAddr, "/-/reload", h); code != http.StatusForbidden {
			t.Errorf("POST /-/reload with %q: %d %q; want 403", h, code, body)
		}
	}
	if n := reloads(on); n != 0 {
		t.Errorf("%d reloads from requests a browser could send cross-site; want 0", n)
	}
	// What curl, a script or the browser's own address bar sends is accepted.
	for i, h := range [][]string{
		nil,
		{"Content-Type", "application/json"},
		{"Sec-Fetch-Site", "same-origin"},
		{"Sec-Fetch-Site", "none"},
	} {
		if code, body := postWith(t, onAddr, "/-/reload", h); code != http.StatusOK {
			t.Errorf("POST /-/reload with %q: %d %q; want 200", h, code, body)
		}
		// The 200 comes before the reload's log line is read from the
		// bot's stderr: wait for it, then check it is the only one.
		testutil.WaitFor(t, fmt.Sprintf("reload %d logged", i+1), func() bool { return reloads(on) >= i+1 })
		if n := reloads(on); n != i+1 {
			t.Errorf("%d reloads after %d accepted requests", n, i+1)
		}
	}
	for _, p := range []*botProc{off, on} {
		p.closeInput()
		if code := p.wait(); code != 0 {
			t.Errorf("exit %d", code)
		}
	}
}
