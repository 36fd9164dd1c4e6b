package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

// BenchmarkStartToFirstPoll measures, per iteration, a cold start of the
// real binary with the Telegram gateway (config, SQLite store, getMe) until
// its first getUpdates reaches the fake Bot API, and reports the process's
// resident memory once it is polling.
func BenchmarkStartToFirstPoll(b *testing.B) {
	tg := faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	defer tg.Close()
	dir := b.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	yaml := fmt.Sprintf(`
gateways:
  console: {enabled: false}
  telegram: {token: %q, api_url: %q}
hitl: {approvers: ["telegram:42"]}
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: ""}
log: {level: warn, format: json}
`, tg.Token(), tg.URL(), filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"))
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		b.Fatal(err)
	}
	var rssKiB int
	for b.Loop() {
		before := len(tg.Polls())
		cmd := exec.Command(botBin, "run", "-config", cfg)
		cmd.Env = baseEnv(dir)
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(hangGuard)
		for len(tg.Polls()) == before {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				b.Fatal("no getUpdates from the bot")
			}
			time.Sleep(100 * time.Microsecond)
		}
		b.StopTimer()
		rssKiB = residentKiB(cmd.Process.Pid)
		cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // waited for below
		cmd.Wait()                          //nolint:errcheck // a clean stop is not what is measured
		b.StartTimer()
	}
	b.ReportMetric(float64(rssKiB)/1024, "RSS-MiB")
}

// residentKiB reads VmRSS of a process from /proc, or 0.
func residentKiB(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	return 0
}
