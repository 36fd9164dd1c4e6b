package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// These tests run the real `bot` binary as a child process: built once in
// TestMain, started in a fresh t.TempDir() per test with a minimal
// environment. Waits are bounded only as hang guards; nothing asserts how
// long anything takes.

// hangGuard bounds every wait for output or exit. It is generous: a test
// that reaches it has hung, it is not slow.
const hangGuard = 30 * time.Second

// botBin is the path of the binary built by TestMain.
var botBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gatehouse-bot-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "TestMain:", err)
		os.Exit(1)
	}
	botBin = filepath.Join(dir, "bot")
	code := 1
	if err := buildBot(botBin); err != nil {
		fmt.Fprintln(os.Stderr, "TestMain: build bot:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildBot builds ./cmd/bot to out with the go tool that built this test
// binary. GOFLAGS and the rest of the environment pass through unchanged.
func buildBot(out string) error {
	cmd := exec.Command(goTool(), "build", "-o", out, ".")
	cmd.Env = os.Environ()
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s build: %w", cmd.Path, err)
	}
	return nil
}

// goTool returns the go command of the toolchain that built this test
// binary, falling back to the one on PATH.
func goTool() string {
	//nolint:staticcheck // runtime.GOROOT is exactly "the toolchain running these tests"
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

// baseEnv is the child's environment: no API keys or tokens from the
// machine running the tests, so the demo model and no platform gateway
// are used unless a test asks otherwise.
func baseEnv(dir string, extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + os.TempDir()}
	return append(env, extra...)
}

// writeFile writes content to dir/name, creating parent directories.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// result is a finished short-lived run of the binary.
type result struct {
	stdout, stderr string
	code           int
}

// runOnce runs the binary in dir with args and input to completion.
func runOnce(t *testing.T, dir string, env []string, input string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, botBin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("bot %v hung (hang guard %s)\nstdout:\n%s\nstderr:\n%s", args, hangGuard, &stdout, &stderr)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("bot %v: %v", args, err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// botProc is a running bot whose stdin the test writes line by line and
// whose stdout it reads as lines.
type botProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout lines; closed at end of output
	seen   []string    // every stdout line received so far (test goroutine only)
	stderr *testutil.SyncBuffer
	done   chan struct{} // closed once the process has been waited for
	state  *os.ProcessState
}

// startBot starts the binary in dir with args, in its own process group
// (killed in cleanup if still running).
func startBot(t *testing.T, dir string, env []string, args ...string) *botProc {
	t.Helper()
	cmd := exec.Command(botBin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return startCmd(t, cmd)
}

// startCmd starts cmd, a bot command whose SysProcAttr puts it in its own
// process group, as startBot does.
func startCmd(t *testing.T, cmd *exec.Cmd) *botProc {
	t.Helper()
	p := &botProc{t: t, cmd: cmd, lines: make(chan string, 10000), stderr: &testutil.SyncBuffer{}, done: make(chan struct{})}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start bot: %v", err)
	}
	t.Cleanup(p.cleanup)
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	go func() {
		defer readers.Done()
		io.Copy(p.stderr, stderr) //nolint:errcheck // ends with the process
	}()
	go func() {
		readers.Wait() // Wait closes the pipes: read them to the end first
		cmd.Wait()     //nolint:errcheck // the state says it all
		p.state = cmd.ProcessState
		close(p.done)
	}()
	return p
}

// cleanup kills the process group if the bot still runs, and on failure
// shows what the bot said.
func (p *botProc) cleanup() {
	select {
	case <-p.done:
	default:
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) //nolint:errcheck // may be gone already
		select {
		case <-p.done:
		case <-time.After(hangGuard):
		}
	}
	if p.t.Failed() {
		p.t.Logf("bot stdout so far:\n%s", strings.Join(p.seen, "\n"))
		p.t.Logf("bot stderr:\n%s", tail(p.stderr.String(), 8000))
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// send writes one line to the bot's stdin.
func (p *botProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("write %q to bot: %v", line, err)
	}
}

// closeInput ends the bot's stdin (Ctrl-D).
func (p *botProc) closeInput() {
	p.t.Helper()
	if err := p.stdin.Close(); err != nil {
		p.t.Fatalf("close bot stdin: %v", err)
	}
}

// expectLine reads stdout lines until one contains sub and returns it. It
// fails the test when the output ends or the hang guard passes first.
func expectLine(t *testing.T, p *botProc, sub string) string {
	t.Helper()
	guard := time.NewTimer(hangGuard)
	defer guard.Stop()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("bot output ended before a line containing %q", sub)
			}
			p.seen = append(p.seen, line)
			if strings.Contains(line, sub) {
				return line
			}
		case <-guard.C:
			t.Fatalf("no line containing %q within the hang guard (%s)", sub, hangGuard)
		}
	}
}

// drain reads the rest of stdout until the bot closes it.
func (p *botProc) drain() {
	p.t.Helper()
	guard := time.NewTimer(hangGuard)
	defer guard.Stop()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return
			}
			p.seen = append(p.seen, line)
		case <-guard.C:
			p.t.Fatalf("bot output did not end within the hang guard (%s)", hangGuard)
		}
	}
}

// wait drains stdout and waits for the process to exit, returning its
// exit code (-1 when killed by a signal).
func (p *botProc) wait() int {
	p.t.Helper()
	p.drain()
	select {
	case <-p.done:
	case <-time.After(hangGuard):
		p.t.Fatalf("bot did not exit within the hang guard (%s)", hangGuard)
	}
	return p.state.ExitCode()
}

// kill9 sends SIGKILL to the bot process itself (not its group: children
// it started in their own groups live on, as after a real crash) and waits
// for it to die.
func (p *botProc) kill9() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatalf("SIGKILL bot: %v", err)
	}
	p.wait()
	if ws, ok := p.state.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		p.t.Fatalf("bot ended with %v; want killed by SIGKILL", p.state)
	}
}

// stdout returns the stdout lines read so far.
func (p *botProc) stdout() string { return strings.Join(p.seen, "\n") }

// tokenRe finds the token of an approval request.
var tokenRe = regexp.MustCompile(`/approve ([23456789ABCDEFGHJKMNPQRSTUVWXYZ]{8})\b`)

// expectToken waits for an approval request and returns its token.
func expectToken(t *testing.T, p *botProc) string {
	t.Helper()
	line := expectLine(t, p, "/approve ")
	m := tokenRe.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("approval request line %q has no token of 8 characters from the token alphabet", line)
	}
	return m[1]
}

// waitFile polls until path's content satisfies ok, within the hang guard,
// and returns the content.
func waitFile(t *testing.T, path string, ok func(string) bool) string {
	t.Helper()
	var last string
	testutil.WaitFor(t, path+" to reach the expected content", func() bool {
		b, _ := os.ReadFile(path)
		last = string(b)
		return ok(last)
	})
	return last
}

// readFile returns path's content, or "" when it does not exist.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}
