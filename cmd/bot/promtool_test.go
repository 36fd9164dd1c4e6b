package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// checkWithPromtool runs Prometheus's linter (promtool check metrics, from
// Debian's package prometheus) on a scrape of /metrics and fails the test
// on anything it says. Without promtool it only logs that it did not run.
func checkWithPromtool(t *testing.T, body string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not installed (Debian: apt-get install prometheus): /metrics not linted")
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics on /metrics: %v\n%s", err, out)
	}
}
