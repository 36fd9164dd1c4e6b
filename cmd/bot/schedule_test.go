package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// scheduleBlock is a schedules: section appended to a configuration.
const scheduleBlock = `
schedules:
  - name: tick
    cron: "@every 1s"
    conversation: "console:local"
    prompt: "run ` + "`echo tick >> ticks.txt`" + `"
`

// TestScheduleThroughTheBinary: an "@every 1s" schedule runs its prompt in
// the console conversation; the shell call is held (the same policy as a
// person's), the next runs are skipped and logged while it waits, /schedules
// lists it, and /approve runs the command once.
func TestScheduleThroughTheBinary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t)+scheduleBlock)
	p := startBot(t, dir, baseEnv(dir))

	expectLine(t, p, "Approval needed: shell")
	token := expectToken(t, p)
	testutil.WaitFor(t, "a skipped run in the log", func() bool {
		return strings.Contains(p.stderr.String(), "run skipped") && strings.Contains(p.stderr.String(), "tick")
	})
	p.send("/schedules")
	expectLine(t, p, "tick — @every 1s in console:local, next run ")
	if n := strings.Count(p.stdout(), "Approval needed: shell"); n != 1 {
		t.Fatalf("%d approval requests while the first run waited; want 1:\n%s", n, p.stdout())
	}
	p.send("/approve " + token)
	expectLine(t, p, "Approved by console:local")
	got := waitFile(t, filepath.Join(dir, "workspace", "ticks.txt"), func(s string) bool { return s != "" })
	if got != "tick\n" {
		t.Errorf("ticks.txt = %q, want one run", got)
	}
	if strings.Contains(p.stdout(), "allow list") {
		t.Errorf("the schedule's run was refused by an allow list:\n%s", p.stdout())
	}
	p.closeInput()
	p.drain()
}

// TestScheduleDoctorAndErrors: doctor lists a schedule with its next run
// and reports one on a gateway that is not enabled (exit 1); a bad cron
// string stops `bot` and `bot doctor` with exit 2 and the key named.
func TestScheduleDoctorAndErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t)+scheduleBlock+
		"  - {name: nightly, cron: \"30 2 * * *\", timezone: Asia/Tokyo, conversation: \"console:local\", prompt: report}\n")
	r := runOnce(t, dir, baseEnv(dir), "", "doctor")
	if r.code != exitOK {
		t.Fatalf("bot doctor: exit %d; want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"tick: @every 1s in console:local, next run ", "nightly: 30 2 * * * in console:local, next run ", "02:30:00 JST"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, r.stdout)
		}
	}

	writeFile(t, dir, "off.yaml", offlineConfig(t)+"schedules: [{name: tg, cron: \"@daily\", conversation: \"telegram:1\", prompt: hi}]\n")
	r = runOnce(t, dir, baseEnv(dir), "", "doctor", "-config", "off.yaml")
	if r.code != exitFail || !strings.Contains(r.stdout, "PROBLEM: schedules[0] tg: gateway telegram is not enabled") {
		t.Errorf("doctor with a schedule on a disabled gateway: exit %d\n%s", r.code, r.stdout)
	}
	r = runOnce(t, dir, baseEnv(dir), "", "-config", "off.yaml")
	if r.code == exitOK || !strings.Contains(r.stderr, "schedules[0].conversation") {
		t.Errorf("bot with a schedule on a disabled gateway: exit %d, stderr %q; want a refusal naming the key", r.code, r.stderr)
	}

	writeFile(t, dir, "bad.yaml", offlineConfig(t)+"schedules: [{name: x, cron: \"0 25 * * *\", conversation: \"console:local\", prompt: hi}]\n")
	for _, sub := range [][]string{{}, {"doctor"}} {
		r := runOnce(t, dir, baseEnv(dir), "", append(sub, "-config", "bad.yaml")...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != exitConfig || len(lines) != 1 || !strings.Contains(lines[0], "schedules[0].cron") {
			t.Errorf("bot %v with a bad cron: exit %d, stderr %q; want %d and one line naming schedules[0].cron", sub, r.code, r.stderr, exitConfig)
		}
	}
}
