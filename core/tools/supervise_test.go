package tools

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/supervise"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// marker returns a fresh GH_MARK=… assignment that the processes of one
// test carry in their environment, so /proc finds them wherever they went.
func marker(t *testing.T) string {
	t.Helper()
	return "GH_MARK=" + strings.ToLower(rand.Text())
}

// noLeftovers fails the test, and kills them, if processes with kv remain.
func noLeftovers(t *testing.T, kv string) {
	t.Helper()
	if pids := testutil.ProcsWithEnv(kv); len(pids) > 0 {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("%d processes of the command still run: %v", len(pids), pids)
	}
}

// detachers are commands that leave processes behind the way a command
// escapes a process-group kill: a new session, a double fork, nohup. Each
// starts two sleeps.
func detachers(kv string) map[string]string {
	return map[string]string{
		"setsid":      kv + " setsid sleep 1000 >/dev/null 2>&1 & " + kv + " setsid sleep 1001 >/dev/null 2>&1 &",
		"double fork": "( " + kv + " setsid sh -c 'sleep 1000 & sleep 1001' >/dev/null 2>&1 & )",
		"nohup":       kv + " nohup sh -c 'sleep 1000 & exec sleep 1001' >/dev/null 2>&1 &",
	}
}

// TestShellKillsDetachedDescendants: whatever a command detached is dead
// and reaped when the call returns, whether the command ended by itself,
// timed out or was cancelled (a /cancel or the bot's shutdown).
func TestShellKillsDetachedDescendants(t *testing.T) {
	for name := range detachers("") {
		t.Run(name+"/exit", func(t *testing.T) {
			kv, ws := marker(t), t.TempDir()
			sh := NewShell(ShellOptions{Workspace: ws})
			done := make(chan error, 1)
			go func() {
				// The command ends once the test has seen its sleeps.
				_, err := runShell(t, context.Background(), sh, detachers(kv)[name]+"\nwhile [ ! -e go ]; do sleep 0.01; done")
				done <- err
			}()
			testutil.WaitFor(t, "the detached sleeps", func() bool { return len(testutil.ProcsWithEnv(kv)) >= 2 })
			if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			noLeftovers(t, kv)
		})
		t.Run(name+"/timeout", func(t *testing.T) {
			t.Parallel()
			// The timeout only has to outlast the start of the supervisor
			// and sh; "started" shows the detached processes existed. On a
			// machine too busy for that, the attempt proves nothing and
			// the next one waits longer; every attempt must time out and
			// leave nothing behind.
			for _, timeout := range []time.Duration{3 * time.Second, 10 * time.Second, 30 * time.Second} {
				kv, ws := marker(t), t.TempDir()
				r := newTestRegistry(t, Options{Timeouts: map[string]time.Duration{"shell": timeout}},
					NewShell(ShellOptions{Workspace: ws}))
				command := detachers(kv)[name] + "\ntouch started\nsleep 1002"
				_, err := r.Run(context.Background(), "shell", json.RawMessage(`{"command":`+strconv.Quote(command)+`}`))
				if !errors.Is(err, ErrTimeout) {
					t.Fatalf("err %v, want ErrTimeout", err)
				}
				noLeftovers(t, kv)
				if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
					return
				}
				t.Logf("the command timed out after %v before it started its processes; trying a longer timeout", timeout)
			}
			t.Error("the command never started its processes before its timeout")
		})
		t.Run(name+"/cancel", func(t *testing.T) {
			kv := marker(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sh := NewShell(ShellOptions{Workspace: t.TempDir()})
			done := make(chan error, 1)
			go func() {
				_, err := runShell(t, ctx, sh, detachers(kv)[name]+"\n"+kv+" sleep 1002")
				done <- err
			}()
			testutil.WaitFor(t, "the command's three sleeps", func() bool { return len(testutil.ProcsWithEnv(kv)) >= 3 })
			cancel()
			if err := <-done; err == nil {
				t.Error("a cancelled command reported success")
			}
			noLeftovers(t, kv)
		})
	}
}

// TestSandboxWorkspaceWrite: a sandboxed command writes the workspace and
// its private TMPDIR (removed after the call) and nothing else, and cannot
// signal its supervisor; with the sandbox off the same write outside works.
func TestSandboxWorkspaceWrite(t *testing.T) {
	if _, err := supervise.Support(); err != nil {
		t.Skip(err)
	}
	ws, outside := t.TempDir(), t.TempDir()
	sh := NewShell(ShellOptions{Workspace: ws, Sandbox: supervise.SandboxWorkspaceWrite})
	out, err := runShell(t, context.Background(), sh,
		"echo in > inside.txt && echo wrote-inside; echo out > "+outside+"/outside.txt; echo x > \"$TMPDIR/t\" && echo tmp=$TMPDIR")
	if err != nil {
		t.Fatalf("%q, %v", out, err)
	}
	if !strings.Contains(out, "wrote-inside") || !strings.Contains(out, "Permission denied") {
		t.Errorf("output %q: want the inside write done and the outside one refused", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "inside.txt")); err != nil {
		t.Errorf("inside.txt: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "outside.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("outside.txt was written (%v)", err)
	}
	_, tmp, ok := strings.Cut(out, "tmp=")
	tmp = strings.TrimSpace(tmp)
	if !ok || tmp == "" || strings.HasPrefix(tmp, ws) {
		t.Fatalf("no private TMPDIR in %q", out)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("TMPDIR %s left behind (%v)", tmp, err)
	}

	out, _ = runShell(t, context.Background(), sh, "kill -KILL $PPID; echo rc=$?")
	if !strings.Contains(out, "rc=1") {
		t.Errorf("kill $PPID from the sandbox: %q, want it refused", out)
	}

	off := NewShell(ShellOptions{Workspace: ws, Sandbox: supervise.SandboxOff})
	if out, err := runShell(t, context.Background(), off, "echo out > "+outside+"/outside.txt"); err != nil {
		t.Fatalf("sandbox off: %q, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "outside.txt")); err != nil {
		t.Errorf("sandbox off: the write outside failed: %v", err)
	}
}

// TestSandboxHidesOtherEnvirons: a sandboxed command cannot read the
// environment of a process outside its sandbox running as the same user
// (the `go` of `go run`, holding the bot's secrets, is one); with the
// sandbox off it can, which shows the test would see a leak. As root the
// test re-runs itself as nobody.
func TestSandboxHidesOtherEnvirons(t *testing.T) {
	if _, err := supervise.Support(); err != nil {
		t.Skip(err)
	}
	if os.Getuid() == 0 {
		// Root may read every process's environment, Landlock or not
		// (the start-up warning says so).
		testutil.RerunAsNobody(t, "TestSandboxHidesOtherEnvirons", func(dir string) []string {
			ws := filepath.Join(dir, "ws")
			if err := os.Mkdir(ws, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(ws, 0o777); err != nil {
				t.Fatal(err)
			}
			return []string{"GH_TEST_WORKSPACE=" + ws}
		})
		return
	}
	const secret = "GH_ENV_SECRET=only-in-this-environ-7Qx"
	target := exec.Command("sleep", "1000")
	target.Env = append(os.Environ(), secret)
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = target.Process.Kill(); _ = target.Wait() }()
	read := "cat /proc/" + strconv.Itoa(target.Process.Pid) + "/environ"
	ws := os.Getenv("GH_TEST_WORKSPACE")
	if ws == "" {
		ws = t.TempDir()
	}
	sandboxed := NewShell(ShellOptions{Workspace: ws, Sandbox: supervise.SandboxWorkspaceWrite})
	out, _ := runShell(t, context.Background(), sandboxed, read)
	if strings.Contains(out, "only-in-this-environ") || !strings.Contains(out, "Permission denied") {
		t.Errorf("sandboxed read of another process's environ: %q; want Permission denied", out)
	}
	off := NewShell(ShellOptions{Workspace: ws})
	if out, _ := runShell(t, context.Background(), off, read); !strings.Contains(out, "only-in-this-environ") {
		t.Errorf("with the sandbox off the same read failed (%q): the test cannot see a leak", out)
	}
}
