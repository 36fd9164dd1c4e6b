package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Nobody is the unprivileged uid and gid RerunAsNobody runs a test as.
const Nobody = 65534

// RerunAsNobody runs the test name of a copy of the running test binary as
// the unprivileged user Nobody, for what root's privileges would hide
// (permission checks, other processes' environments), and fails t with the
// run's output unless it passes. The run's working directory, HOME and
// TMPDIR are a fresh directory that user may write; env, when not nil, is
// called with that directory first and returns extra environment entries.
// Call it when os.Getuid() is 0, and return.
func RerunAsNobody(t *testing.T, name string, env func(dir string) []string) {
	t.Helper()
	dir := SharedTempDir(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(self))
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	extra := []string{"HOME=" + dir, "TMPDIR=" + dir}
	if env != nil {
		extra = append(extra, env(dir)...)
	}
	cmd := exec.Command(bin, "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: Nobody, Gid: Nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("as uid %d: %v\n%s", Nobody, err, out)
	}
}

// SharedTempDir returns a fresh directory that Nobody may use too
// (t.TempDir's are the test user's alone), removed when the test ends.
func SharedTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gatehouse-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}
