package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

// hangGuard bounds every wait on the bot; reaching it means it hung.
const hangGuard = 60 * time.Second

// buildBot builds ./cmd/bot of the module the bench runs in into dir,
// the way the Dockerfile builds the shipped binary (CGO_ENABLED=0,
// -tags nethttpomithttp2, -trimpath, -ldflags "-s -w": static, no dynamic loader at start-up, about
// 2 MiB less resident than a default cgo build), and returns its path.
// With profile, it is built with the tag gatehouse_pprof, which compiles in
// GATEHOUSE_CPUPROFILE.
func buildBot(ctx context.Context, dir string, profile bool) (string, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	var tags []string
	if profile {
		tags = append(tags, "gatehouse_pprof")
	}
	return buildIn(ctx, root, filepath.Join(dir, "bot"), tags...)
}

// moduleRoot is the directory of the module the bench runs in.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("build: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("build: not inside the gatehouse module; run from the repository or pass -bot")
	}
	return filepath.Dir(gomod), nil
}

// releaseTag is the build tag every release build has (.goreleaser.yaml,
// the Dockerfile): net/http without its bundled HTTP/2.
const releaseTag = "nethttpomithttp2"

// buildIn builds ./cmd/bot of the module at root into bin, with releaseTag
// and tags.
func buildIn(ctx context.Context, root, bin string, tags ...string) (string, error) {
	tags = append([]string{releaseTag}, tags...)
	args := []string{"build", "-trimpath", "-ldflags", "-s -w", "-tags", strings.Join(tags, ","), "-o", bin}
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/bot")...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build: go build ./cmd/bot: %w\n%s", err, stderr.Bytes())
	}
	return bin, nil
}

// writeConfig writes the bot's configuration for the fakes into dir: the
// Telegram gateway open to everyone, the console off (the approver is a
// Telegram user who never writes: an approver must be on an enabled
// gateway), no HTTP listener, info-level JSON logs (the production
// default level).
func writeConfig(dir string, tg *faketg.Server, ai *fakeopenai.Server) (string, error) {
	yaml := fmt.Sprintf(`llm:
  providers:
    - {name: fake, base_url: %q, api_key: sk-bench-not-a-key, model: bench-model}
gateways:
  console: {enabled: false}
  telegram: {token: %q, api_url: %q, allow: ["*"]}
hitl:
  approvers: ["telegram:1"]
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: ""}
log: {level: info, format: json}
`, ai.URL(), tg.Token(), tg.URL(), filepath.Join(dir, "workspace"), filepath.Join(dir, "gatehouse.db"))
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	return path, nil
}

// botProcess is one running bot.
type botProcess struct {
	cmd     *exec.Cmd
	started time.Time
	logPath string
	done    chan struct{} // closed once the process has been waited for
	err     error         // its exit status, set before done closes
}

// startBot starts bin with the configuration, its log in dir/bot-N.log.
// extraEnv is added to a minimal environment (no keys of this machine).
func startBot(bin, cfg, dir string, n int, extraEnv ...string) (*botProcess, error) {
	logPath := filepath.Join(dir, fmt.Sprintf("bot-%d.log", n))
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("start bot: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "run", "-config", cfg)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + os.TempDir()}, extraEnv...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &botProcess{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start bot: %w", err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// pid is the bot's process id.
func (p *botProcess) pid() int { return p.cmd.Process.Pid }

// exited reports whether the bot has ended, with its error.
func (p *botProcess) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop asks the bot to stop (SIGTERM, as a service manager does), waits
// for it, and kills it past the hang guard.
func (p *botProcess) stop() error {
	if done, err := p.exited(); done {
		return fmt.Errorf("bot had already exited: %v\n%s", err, p.logTail())
	}
	p.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // it may have just exited; waited for below
	select {
	case <-p.done:
		if p.err != nil {
			return fmt.Errorf("bot stopped with %v\n%s", p.err, p.logTail())
		}
		return nil
	case <-time.After(hangGuard):
		syscall.Kill(-p.pid(), syscall.SIGKILL) //nolint:errcheck // the group we started
		<-p.done
		return fmt.Errorf("bot did not stop within %s after SIGTERM", hangGuard)
	}
}

// kill ends the bot's process group at once (error paths).
func (p *botProcess) kill() {
	if done, _ := p.exited(); !done {
		syscall.Kill(-p.pid(), syscall.SIGKILL) //nolint:errcheck // the group we started
		<-p.done
	}
}

// logTail is the end of the bot's log, for error messages. The bot
// escapes control characters in its own log lines.
func (p *botProcess) logTail() string {
	b, _ := os.ReadFile(p.logPath)
	const keep = 2000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return "bot log (tail):\n" + string(b)
}

// waitFor polls cond every interval until it holds, the bot exits, ctx
// ends or the hang guard passes.
func (p *botProcess) waitFor(ctx context.Context, what string, interval time.Duration, cond func() bool) error {
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if done, err := p.exited(); done {
			return fmt.Errorf("waiting for %s: the bot exited (%v)\n%s", what, err, p.logTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: nothing after %s\n%s", what, hangGuard, p.logTail())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(interval):
		}
	}
	return nil
}

// memory is a process's resident memory in KiB: now, its peak, and
// how much of it now is anonymous (heap, stacks, C-translated SQLite's
// allocations) and file-backed (the binary's mapped pages).
type memory struct {
	rssKiB, hwmKiB, anonKiB, fileKiB int
}

// readMemory reads VmRSS and VmHWM from /proc/<pid>/status.
func readMemory(pid int) (memory, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, fmt.Errorf("memory: %w", err)
	}
	return parseStatus(string(data))
}

// parseStatus reads VmRSS, VmHWM, RssAnon and RssFile ("VmRSS:	   14852
// kB") from the text of a /proc/<pid>/status file; the last two may be
// missing (old kernels).
func parseStatus(status string) (memory, error) {
	var m memory
	fields := map[string]*int{"VmRSS": &m.rssKiB, "VmHWM": &m.hwmKiB, "RssAnon": &m.anonKiB, "RssFile": &m.fileKiB}
	found := 0
	for line := range strings.Lines(status) {
		name, rest, ok := strings.Cut(line, ":")
		v, known := fields[name]
		if !ok || !known {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		if err != nil {
			return m, fmt.Errorf("memory: %s: %w", name, err)
		}
		*v = n
		if name == "VmRSS" || name == "VmHWM" {
			found++
		}
	}
	if found != 2 {
		return m, errors.New("memory: no VmRSS and VmHWM in /proc status")
	}
	return m, nil
}

// userHZ is the unit of the times in /proc/<pid>/stat (USER_HZ, 100 on
// every Linux architecture Go supports).
const userHZ = 100

// readCPU reads the CPU time (user + system) a process has used so far.
func readCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("cpu: %w", err)
	}
	return parseStat(string(data))
}

// parseStat reads utime+stime (fields 14 and 15) from the text of a
// /proc/<pid>/stat file. The command name (field 2) is in parentheses and
// may hold spaces and parentheses itself, so fields are counted from the
// last ')'.
func parseStat(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("cpu: malformed /proc stat")
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, errors.New("cpu: short /proc stat")
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}
