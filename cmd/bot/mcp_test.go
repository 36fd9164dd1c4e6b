package main

import (
	"os"
	"strings"
	"sync"
	"testing"

	fakemcp "github.com/gatehouse-bot/gatehouse/internal/fake/mcp"
)

var (
	fakeMCPOnce sync.Once
	fakeMCPBin  string
	fakeMCPErr  error
)

// fakeMCP builds the stdio fake MCP server once for the package's tests.
func fakeMCP(t *testing.T) string {
	t.Helper()
	fakeMCPOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gatehouse-fakemcp-")
		if err != nil {
			fakeMCPErr = err
			return
		}
		fakeMCPBin, fakeMCPErr = fakemcp.Build(dir)
	})
	if fakeMCPErr != nil {
		t.Fatal(fakeMCPErr)
	}
	return fakeMCPBin
}

// TestDoctorStartsMCPServers: doctor starts every enabled MCP server and
// says how many tools it has; one that fails to start is a warning (the
// bot runs without its tools: exit 0), its stderr quoted with the secret
// in its env redacted; a disabled one is not started.
func TestDoctorStartsMCPServers(t *testing.T) {
	t.Parallel()
	bin := fakeMCP(t)
	dir := t.TempDir()
	const secret = "mcp-secret-ZZZZ4242"
	writeFile(t, dir, "config.yaml", defaultConfig(t)+`
mcp:
  servers:
    - {name: good, command: "`+bin+`"}
    - {name: broken, command: "`+bin+`", env: {FAKE_MCP_FAIL_START: "${MCP_TOKEN}"}}
    - {name: off, command: /nonexistent, enabled: false}
`)
	r := runOnce(t, dir, baseEnv(dir, "MCP_TOKEN="+secret), "", "doctor")
	if r.code != exitOK {
		t.Fatalf("bot doctor: exit %d; want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitOK, r.stdout, r.stderr)
	}
	for _, want := range []string{"good (stdio " + bin + "): started, 6 tools: mcp__good__", "warning: broken", "on purpose", "off: disabled"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout+r.stderr, secret) {
		t.Errorf("doctor printed the MCP server's secret:\n%s\n%s", r.stdout, r.stderr)
	}
}

// TestDoctorRedactsMCPStderrBeforeItIsCut: a failing server's last stderr
// line is cut to 512 bytes for the error doctor prints. Probe cut it
// before any redaction (its server had no secrets), so a secret the cut
// fell inside lost its tail and doctor's own redaction no longer knew
// its head, which was printed.
func TestDoctorRedactsMCPStderrBeforeItIsCut(t *testing.T) {
	t.Parallel()
	bin := fakeMCP(t)
	dir := t.TempDir()
	const secret = "mcp-secret-0123456789abcdefghijklmnopqrs"
	// The fake's line is "fakemcp: failing to start on purpose: " (38
	// bytes) and the variable: the secret spans bytes 480 to 520, across
	// the cut (512 less the truncation marker).
	pad := strings.Repeat("x", 480-38-1)
	writeFile(t, dir, "config.yaml", defaultConfig(t)+`
mcp:
  servers:
    - {name: broken, command: "`+bin+`", env: {FAKE_MCP_FAIL_START: "`+pad+` ${MCP_TOKEN}"}}
`)
	r := runOnce(t, dir, baseEnv(dir, "MCP_TOKEN="+secret), "", "doctor")
	if r.code != exitOK || !strings.Contains(r.stdout, "on purpose") {
		t.Fatalf("bot doctor: exit %d; want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitOK, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, secret[:8]) {
		t.Errorf("doctor printed the head of the MCP server's secret:\n%s\n%s", r.stdout, r.stderr)
	}
}
