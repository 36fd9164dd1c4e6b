package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestApprovalAfterAReloadToDenyIsRefused: a shell call held while the
// policy said approve, approved after a SIGHUP reloaded it to deny, does
// not run: the approver is told the policy refused it, the model is told
// why (as for a deny), and the audit records the refusal. Before, the
// broker ran whatever had been held, whatever the policy now said.
func TestApprovalAfterAReloadToDenyIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	model := scriptedModel("run it", "echo ran >> ran.txt")
	srv := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		if last := lastMessage(r); last.Role == "user" && strings.HasPrefix(last.Content, "[gatehouse]") &&
			strings.Contains(last.Content, "refused: the policy forbids this shell call") {
			return fakeopenai.Text("MODEL: the policy refused the command.")
		}
		return model(r)
	})
	const (
		approve = `    - {tool: shell, decision: approve}`
		deny    = `    - {tool: shell, decision: deny}`
	)
	writeFile(t, dir, "config.yaml", fakeConfig(srv.URL(), "sk-test", approve, "info"))
	p := startBot(t, dir, baseEnv(dir))
	p.send("run it")
	token := expectToken(t, p)

	writeFile(t, dir, "config.yaml", fakeConfig(srv.URL(), "sk-test", deny, "info"))
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "config reloaded", func() bool { return strings.Contains(p.stderr.String(), "config reloaded") })
	p.send("/approve " + token)
	refused := expectLine(t, p, "Refused: shell")
	for _, want := range []string{token, "did not run", "the policy forbids this shell call", "#1 {tool: shell, decision: deny}"} {
		if !strings.Contains(refused, want) {
			t.Errorf("refusal notice %q does not contain %q", refused, want)
		}
	}
	expectLine(t, p, "MODEL: the policy refused the command.")
	p.send("/approve " + token)
	expectLine(t, p, "already approved (it ran and failed)")
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
	if got := readFile(t, filepath.Join(dir, "workspace", "ran.txt")); got != "" {
		t.Errorf("ran.txt = %q: the call the policy now denies ran", got)
	}
	if got := auditOutcomes(t, dir, baseEnv(dir)); got["refused"] != 1 || got["approved"] != 0 || got["executed"] != 0 {
		t.Errorf("audit of the shell call: %v; want refused 1, neither approved nor executed", got)
	}
}
