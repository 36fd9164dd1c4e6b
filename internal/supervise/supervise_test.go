package supervise

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func TestParseSandbox(t *testing.T) {
	for _, sb := range []Sandbox{SandboxOff, SandboxWorkspaceWrite} {
		if got, err := ParseSandbox(sb.String()); err != nil || got != sb {
			t.Errorf("ParseSandbox(%q) = %v, %v", sb.String(), got, err)
		}
	}
	if _, err := ParseSandbox("strict"); err == nil {
		t.Error("ParseSandbox(strict) gave no error")
	}
}

// TestChoose: off is off without a word; auto and workspace-write give the
// sandbox where the kernel supports it, and auto says so when it does not.
func TestChoose(t *testing.T) {
	if sb, warnings := Choose("off"); sb != SandboxOff || len(warnings) != 0 {
		t.Errorf("Choose(off) = %v, %q", sb, warnings)
	}
	_, unsupported := Support()
	for _, setting := range []string{"", "auto", "workspace-write"} {
		sb, warnings := Choose(setting)
		switch {
		case unsupported == nil && sb != SandboxWorkspaceWrite:
			t.Errorf("Choose(%q) = %v on a kernel with Landlock ABI %d+", setting, sb, MinABI)
		case unsupported != nil && setting != "workspace-write" && (sb != SandboxOff || len(warnings) == 0):
			t.Errorf("Choose(%q) = %v, %q without Landlock; want off and a warning", setting, sb, warnings)
		}
		root := slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, "as root, the shell sandbox") })
		if want := os.Geteuid() == 0 && sb != SandboxOff; root != want {
			t.Errorf("Choose(%q) warnings %q: root warning %v, want %v", setting, warnings, root, want)
		}
	}
}

// TestDescendants finds a grandchild through /proc.
func TestDescendants(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 1000 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var got []int
	testutil.WaitFor(t, "sh and its sleep", func() bool {
		got = Descendants(os.Getpid())
		return len(got) >= 2
	})
	for _, pid := range got {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = cmd.Wait()
	if !slices.Contains(got, cmd.Process.Pid) {
		t.Fatalf("Descendants = %v; want sh %d and its sleep", got, cmd.Process.Pid)
	}
}
