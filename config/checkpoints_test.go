package config

import (
	"strings"
	"testing"
)

// TestCheckpointsConfig: tools.checkpoints defaults to enabled with
// 16MiB / 512MiB / 50, takes sizes with units, and names the key of a bad
// value.
func TestCheckpointsConfig(t *testing.T) {
	c := mustParse(t, "hitl: {approvers: [console:local]}\n", noEnv)
	want := Checkpoints{Enabled: true, MaxFile: 16 << 20, MaxTotal: 512 << 20, Keep: 50}
	if c.Tools.Checkpoints != want {
		t.Errorf("defaults %+v, want %+v", c.Tools.Checkpoints, want)
	}
	c = mustParse(t, "tools: {checkpoints: {max_file: 64KiB, max_total: 2 GiB, keep: 5}}\nhitl: {approvers: [console:local]}\n", noEnv)
	if got := c.Tools.Checkpoints; got.MaxFile != 64<<10 || got.MaxTotal != 2<<30 || got.Keep != 5 || !got.Enabled {
		t.Errorf("set: %+v", got)
	}
	for _, tc := range []struct{ yaml, key string }{
		{"tools: {checkpoints: {max_file: 16 parsecs}}", "tools.checkpoints.max_file"},
		{"tools: {checkpoints: {max_file: 1MiB, max_total: 1KiB}}", "tools.checkpoints.max_total"},
		{"tools: {checkpoints: {keep: 0}}", "tools.checkpoints.keep"},
		{"tools: {checkpoints: {every: 1}}", "tools.checkpoints.every"},
	} {
		_, err := Parse([]byte(tc.yaml+"\nhitl: {approvers: [console:local]}\n"), noEnv, specs())
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: error %v, want one naming %s", tc.yaml, err, tc.key)
		}
	}
	if s := Size(16 << 20).String(); s != "16MiB" {
		t.Errorf("String %q", s)
	}
}
