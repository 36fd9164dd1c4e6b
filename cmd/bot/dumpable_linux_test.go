package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// nobody is the unprivileged user the test runs the bot as when it runs as
// root itself: root may read any process's /proc files, so only a bot
// running as another user shows what the hardening does.
const nobody = testutil.Nobody

// TestShellCannotReadTheBotsEnvironment: a shell command the model runs,
// as the bot's own user, cannot read the bot's environment (and so its
// secrets) from /proc/$PPID/environ, because the bot marks itself not
// dumpable at start-up. The command writes what it read to a file, so the
// check does not depend on the redaction of tool output.
func TestShellCannotReadTheBotsEnvironment(t *testing.T) {
	t.Parallel()
	const secret = "env-only-secret-Zq81xP"
	const trigger = "read your own environment"
	srv := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		switch last := lastMessage(r); {
		case last.Role == "user" && last.Content == trigger:
			return fakeopenai.ToolCalls(fakeopenai.Call{Name: "shell",
				Args: `{"command":"cat /proc/$PPID/environ > environ.txt 2> environ.err; echo rc=$?"}`})
		case last.Role == "tool":
			return fakeopenai.Text("MODEL: done.")
		}
		return fakeopenai.Text("MODEL: ok.")
	})
	dir := testutil.SharedTempDir(t)
	writeFile(t, dir, "config.yaml", fakeConfig(srv.URL(), "sk-test", `    - {tool: "*", decision: allow}`, "info"))
	bin := filepath.Join(dir, "bot")
	copyFile(t, botBin, bin, 0o755)
	cmd := exec.Command(bin)
	cmd.Dir, cmd.Env = dir, baseEnv(dir, "SERVICE_TOKEN="+secret)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if os.Getuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: nobody, Gid: nobody}
	}
	p := startCmd(t, cmd)
	p.send(trigger)
	expectLine(t, p, "MODEL: done.")
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; want 0", code)
	}
	ws := filepath.Join(dir, "workspace")
	if got := readFile(t, filepath.Join(ws, "environ.txt")); strings.Contains(got, secret) || strings.Contains(got, "SERVICE_TOKEN") {
		t.Fatalf("the shell read the bot's environment from /proc/$PPID/environ:\n%q", got)
	}
	if got := readFile(t, filepath.Join(ws, "environ.err")); !strings.Contains(got, "Permission denied") {
		t.Errorf("reading /proc/$PPID/environ failed with %q; want Permission denied", got)
	}
}

// copyFile copies src to dst with mode.
func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	// cp writes the copy, not this process: a descriptor held open here for
	// writing is inherited by whatever a parallel test forks at that moment,
	// and dst cannot be executed ("text file busy") until that child has
	// exec'd (go.dev/issue/22315).
	if out, err := exec.Command("cp", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp %s %s: %v\n%s", src, dst, err, out)
	}
	if err := os.Chmod(dst, mode); err != nil {
		t.Fatal(err)
	}
}
