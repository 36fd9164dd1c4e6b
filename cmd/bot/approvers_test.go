package main

import (
	"strings"
	"syscall"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestApproversOnlyOnADisabledGatewayAreRefused: hitl.approvers naming
// only identities on gateways that are not enabled (telegram without a
// token) leaves nobody to approve. It was accepted; now `bot` refuses it
// with exit 2 naming hitl.approvers, `bot doctor` reports it as a
// problem, and a reload to it is rejected, the running approvers kept.
func TestApproversOnlyOnADisabledGatewayAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const console, telegramOnly = "approvers: [console:local]", `approvers: ["telegram:123456789"]`
	good := offlineConfig(t)
	if !strings.Contains(good, console) {
		t.Fatalf("the shipped config.yaml no longer has %q; update this test", console)
	}
	bad := strings.Replace(good, console, telegramOnly, 1)
	const why = "no approver is on an enabled gateway"

	writeFile(t, dir, "bad.yaml", bad)
	r := runOnce(t, dir, baseEnv(dir), "", "-config", "bad.yaml")
	if r.code != exitConfig || !strings.Contains(r.stderr, "hitl.approvers") || !strings.Contains(r.stderr, why) {
		t.Errorf("bot with approvers only on telegram (not enabled): exit %d, stderr %q; want %d naming hitl.approvers and saying %q", r.code, r.stderr, exitConfig, why)
	}
	if strings.Contains(r.stderr, "gatehouse running") {
		t.Errorf("the bot ran:\n%s", r.stderr)
	}
	r = runOnce(t, dir, baseEnv(dir), "", "doctor", "-config", "bad.yaml")
	if r.code != exitFail || !strings.Contains(r.stdout, "PROBLEM: hitl.approvers") || !strings.Contains(r.stdout, why) {
		t.Errorf("bot doctor with approvers only on telegram: exit %d\n%s", r.code, r.stdout)
	}
	// One approver on an enabled gateway is enough.
	writeFile(t, dir, "mixed.yaml", strings.Replace(good, console, `approvers: ["telegram:123456789", console:local]`, 1))
	if r := runOnce(t, dir, baseEnv(dir), "", "doctor", "-config", "mixed.yaml"); r.code != exitOK {
		t.Errorf("bot doctor with an approver on the console too: exit %d\n%s", r.code, r.stdout)
	}

	// A reload to it is rejected: console:local still approves.
	writeFile(t, dir, "config.yaml", good)
	p := startBot(t, dir, baseEnv(dir))
	p.send("/pending")
	expectLine(t, p, "No pending approvals")
	writeFile(t, dir, "config.yaml", bad)
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the reload rejected", func() bool { return strings.Contains(p.stderr.String(), "config reload rejected") })
	if log := p.stderr.String(); !strings.Contains(log, "hitl.approvers") || !strings.Contains(log, why) {
		t.Errorf("the rejection does not name hitl.approvers and say %q:\n%s", why, tail(log, 2000))
	}
	p.send("/pending")
	expectLine(t, p, "No pending approvals")
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
}
