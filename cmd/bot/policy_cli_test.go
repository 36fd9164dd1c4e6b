package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// policyConfig is the shipped config.yaml with its policy.rules replaced:
// deny rm -rf, hold shell, allow one MCP tool, deny the other MCP tools of
// that server.
func policyConfig(t *testing.T) string {
	t.Helper()
	cfg := defaultConfig(t)
	rules := regexp.MustCompile(`(?ms)^policy:\n  rules:.*?\n\n`)
	if !rules.MatchString(cfg) {
		t.Fatal("the shipped config.yaml has no policy.rules block followed by a blank line")
	}
	return rules.ReplaceAllLiteralString(cfg, `policy:
  rules:
    - {tool: shell, args: 'rm -rf', decision: deny}
    - {tool: shell, decision: approve}
    - {tool: "mcp__github__get_*", decision: allow}
    - {tool: "mcp__github__*", decision: deny}

`)
}

// TestPolicyTestDecisions: `bot policy test` prints the decision and the
// rule as written, and exits 0 for allow, 3 for approve, 4 for deny; an
// MCP name is judged by the rules alone; arguments are canonicalised as at
// run time (a \u escape does not hide rm -rf).
func TestPolicyTestDecisions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", policyConfig(t))
	cases := []struct {
		name      string
		args      []string
		code      int
		decision  string
		rule      string
		standing  string
		arguments string
	}{
		{"allow by default", []string{"-tool", "read_file", "-args", `{"path":"notes.txt"}`},
			exitOK, "allow", "default: read-only tool", "none (no database", `{"path":"notes.txt"}`},
		{"approve by a rule", []string{"-tool", "shell", "-args", `{"command":"ls -la"}`},
			exitApprove, "approve", `#2 {tool: shell, decision: approve}`, "", ""},
		{"deny by a pattern", []string{"-tool", "shell", "-args", `{"command": "rm -rf /"}`},
			exitDeny, "deny", `#1 {tool: shell, args: "rm -rf", decision: deny}`, "", `{"command":"rm -rf /"}`},
		{"deny through an escape", []string{"-tool", "shell", "-args", `{"command":"rm \u002drf /"}`},
			exitDeny, "deny", "#1 ", "", `{"command":"rm -rf /"}`},
		{"write_file held by default", []string{"-tool", "write_file", "-args", `{"path":"a","content":"b"}`},
			exitApprove, "approve", "default:", "", ""},
		{"MCP allowed by name", []string{"-tool", "mcp__github__get_issue", "-args", `{"n":1}`},
			exitOK, "allow", `#3 {tool: "mcp__github__get_*", decision: allow}`, "", ""},
		{"MCP denied by glob", []string{"-tool", "mcp__github__delete_repo"},
			exitDeny, "deny", "#4 ", "", ""},
		{"MCP held by default", []string{"-tool", "mcp__home__lights_off", "-identity", "telegram:42", "-conversation", "telegram:42"},
			exitApprove, "approve", "default: MCP tool", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runOnce(t, dir, baseEnv(dir), "", append([]string{"policy", "test"}, c.args...)...)
			if r.code != c.code {
				t.Fatalf("exit %d; want %d\nstdout:\n%s\nstderr:\n%s", r.code, c.code, r.stdout, r.stderr)
			}
			for _, want := range []string{"decision:     " + c.decision + "\n", "rule:         " + c.rule, "standing:     " + c.standing, c.arguments} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("stdout does not contain %q:\n%s", want, r.stdout)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "gatehouse.db")); !os.IsNotExist(err) {
		t.Errorf("policy test created the store (stat: %v); it only reads", err)
	}
}

// TestPolicyTestUsageErrors: an unknown tool, an unknown argument, invalid
// JSON, a missing -tool and a malformed identity exit 2 and say why on
// stderr, with nothing on stdout.
func TestPolicyTestUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", policyConfig(t))
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown tool", []string{"-tool", "format_disk"}, `unknown tool "format_disk"`},
		{"unknown argument", []string{"-tool", "read_file", "-args", `{"PATH":"a"}`}, "unknown argument PATH"},
		{"invalid JSON", []string{"-tool", "shell", "-args", `{"command":`}, "invalid JSON"},
		{"no tool", nil, "give -tool"},
		{"bad identity", []string{"-tool", "read_file", "-args", `{"path":"a"}`, "-identity", "nobody"}, "want gateway:id"},
		{"unknown subcommand", nil, "unknown subcommand"},
		{"-args with -cases", []string{"-cases", "policy_test.yaml", "-args", `{"command":"ls"}`}, "-args does not go with -cases"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"policy", "test"}, c.args...)
			if c.name == "unknown subcommand" {
				args = []string{"policy", "frobnicate"}
			}
			r := runOnce(t, dir, baseEnv(dir), "", args...)
			if r.code != exitConfig {
				t.Fatalf("exit %d; want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitConfig, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, c.want) {
				t.Errorf("stderr does not say %q:\n%s", c.want, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout not empty on a usage error:\n%s", r.stdout)
			}
		})
	}
}

// TestPolicyCasesShipped: the shipped policy_test.yaml passes against the
// shipped config.yaml, one line per case and a summary.
func TestPolicyCasesShipped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", defaultConfig(t))
	b, err := os.ReadFile(filepath.Join("..", "..", "policy_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "policy_test.yaml", string(b))
	r := runOnce(t, dir, baseEnv(dir), "", "policy", "test", "-cases", "policy_test.yaml")
	if r.code != exitOK {
		t.Fatalf("exit %d; want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	n := strings.Count(string(b), "\n  - name:")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != n+1 || n == 0 {
		t.Fatalf("%d lines for %d cases; want one per case and a summary:\n%s", len(lines), n, r.stdout)
	}
	for _, l := range lines[:n] {
		if !strings.HasPrefix(l, "ok   ") {
			t.Errorf("case line %q does not start with ok", l)
		}
	}
	if want := "0 not"; !strings.HasSuffix(lines[n], want) {
		t.Errorf("summary %q does not end with %q", lines[n], want)
	}
}

// TestPolicyCasesFailingAndInvalid: a case that does not get its want
// fails the run (exit 1, named with what it got); an invalid file — an
// unknown key, a bad want, an unknown tool, no cases — exits 2 naming the
// problem.
func TestPolicyCasesFailingAndInvalid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", policyConfig(t))
	writeFile(t, dir, "failing.yaml", `cases:
  - name: ls is held
    tool: shell
    args: {command: ls}
    want: approve
  - name: wrongly thought allowed
    tool: shell
    args: {command: "rm -rf /tmp/x"}
    want: allow
`)
	r := runOnce(t, dir, baseEnv(dir), "", "policy", "test", "-cases", "failing.yaml")
	if r.code != exitFail {
		t.Fatalf("exit %d; want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitFail, r.stdout, r.stderr)
	}
	for _, want := range []string{"ok   ls is held", "FAIL wrongly thought allowed", "→ deny by #1", "want allow", "1 of 2 cases as wanted, 1 not"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout does not contain %q:\n%s", want, r.stdout)
		}
	}

	invalid := []struct{ name, yaml, want string }{
		{"unknown key", "cases:\n  - name: a\n    tool: shell\n    args: {command: ls}\n    wnat: approve\n", "wnat"},
		{"bad want", "cases:\n  - name: a\n    tool: shell\n    args: {command: ls}\n    want: maybe\n", "maybe"},
		{"unknown tool", "cases:\n  - name: a\n    tool: nuke\n    want: deny\n", "nuke"},
		{"no cases", "cases: []\n", "cases"},
		{"no want", "cases:\n  - name: a\n    tool: shell\n", `cases[0] ("a").want: required`},
		{"not YAML", "cases: [\n", "policy"},
		{"args a string", "cases:\n  - name: quoted args\n    tool: shell\n    args: '{\"command\": \"ls\"}'\n    want: approve\n",
			`cases[0] ("quoted args").args: want a mapping`},
		{"args a list", "cases:\n  - name: ok\n    tool: read_file\n    args: {path: a}\n    want: allow\n  - name: listed args\n    tool: shell\n    args: [ls]\n    want: approve\n",
			`cases[1] ("listed args").args: want a mapping`},
	}
	for _, c := range invalid {
		t.Run(c.name, func(t *testing.T) {
			writeFile(t, dir, "bad.yaml", c.yaml)
			r := runOnce(t, dir, baseEnv(dir), "", "policy", "test", "-cases", "bad.yaml")
			if r.code != exitConfig {
				t.Fatalf("exit %d; want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitConfig, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, c.want) {
				t.Errorf("stderr does not name %q:\n%s", c.want, r.stderr)
			}
		})
	}
}

// TestPolicyExplain: the effective rules in order, numbered from 1, one per
// line, then the default.
func TestPolicyExplain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", policyConfig(t))
	r := runOnce(t, dir, baseEnv(dir), "", "policy", "explain")
	if r.code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	want := []string{
		`#1 {tool: shell, args: "rm -rf", decision: deny}`,
		`#2 {tool: shell, decision: approve}`,
		`#3 {tool: "mcp__github__get_*", decision: allow}`,
		`#4 {tool: "mcp__github__*", decision: deny}`,
	}
	if len(lines) != len(want)+2 {
		t.Fatalf("%d lines; want a heading, %d rules and the default:\n%s", len(lines), len(want), r.stdout)
	}
	for i, w := range want {
		if lines[i+1] != w {
			t.Errorf("line %d = %q; want %q", i+2, lines[i+1], w)
		}
	}
	last := lines[len(lines)-1]
	for _, w := range []string{"default: ", "allow for the read-only tools", "read_file", "approve for", "write_file", "mcp__"} {
		if !strings.Contains(last, w) {
			t.Errorf("default line %q does not mention %q", last, w)
		}
	}
}

// TestPolicyTestStandingAllow: a standing allow the running bot added
// ("/approve … always" for `sh run.sh`) makes `bot policy test` of exactly
// that call allow, exit 0, with the allow named and "applies"; another
// command is still held; a deny rule matching the call is never relaxed
// (exit 4, "a deny is never relaxed"); once run.sh changes the allow no
// longer applies (exit 3, the file named), as in the running bot.
func TestPolicyTestStandingAllow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := offlineConfig(t)
	writeFile(t, dir, "config.yaml", cfg)
	ws := filepath.Join(dir, "workspace")
	writeFile(t, ws, "run.sh", "echo ok >> out.txt\n")

	p := startBot(t, dir, baseEnv(dir))
	p.send("run `sh run.sh`")
	token := expectToken(t, p)
	p.send("/approve " + token + " always")
	expectLine(t, p, "Standing allow #1 added")
	waitFile(t, filepath.Join(ws, "out.txt"), func(s string) bool { return s == "ok\n" })
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("bot exit %d; want 0", code)
	}

	policyTest := func(t *testing.T, config, command string, code int, want ...string) {
		t.Helper()
		r := runOnce(t, dir, baseEnv(dir), "", "policy", "test", "-config", config,
			"-tool", "shell", "-args", `{"command":"`+command+`"}`)
		if r.code != code {
			t.Fatalf("exit %d; want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
		}
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("stdout does not contain %q:\n%s", w, r.stdout)
			}
		}
	}

	policyTest(t, "config.yaml", "sh run.sh", exitOK,
		"decision:     allow\n",
		"rule:         #1 {tool: shell, decision: approve} (approve, relaxed to allow by a standing allow)\n",
		"standing:     #1 added by console:local at ",
		": applies (the call runs without asking)\n")
	policyTest(t, "config.yaml", "sh other.sh", exitApprove,
		"decision:     approve\n",
		"rule:         #1 {tool: shell, decision: approve}\n",
		"standing:     none for exactly this call\n")

	// The same store, a policy that denies the call: the allow is shown,
	// and does not relax the deny.
	deny := strings.Replace(cfg, "    - {tool: shell, decision: approve}",
		"    - {tool: shell, args: 'run\\.sh', decision: deny}\n    - {tool: shell, decision: approve}", 1)
	if deny == cfg {
		t.Fatal("the shipped config.yaml no longer has the rule {tool: shell, decision: approve}; update this test")
	}
	writeFile(t, dir, "deny.yaml", deny)
	policyTest(t, "deny.yaml", "sh run.sh", exitDeny,
		"decision:     deny\n",
		`rule:         #1 {tool: shell, args: "run\\.sh", decision: deny}`+"\n",
		": does not apply (a deny is never relaxed)\n")

	// run.sh rewritten: held again, the changed file named.
	writeFile(t, ws, "run.sh", "echo pwned >> evil.txt\n")
	policyTest(t, "config.yaml", "sh run.sh", exitApprove,
		"decision:     approve\n",
		"rule:         #1 {tool: shell, decision: approve}\n",
		": does not apply, files changed since: run.sh\n")
}

// TestPolicyShowsRulesAndArgsAsWritten: a rule whose pattern has
// backslashes reads in `bot policy explain`, `bot policy test` and a cases
// line exactly as Rule.Name writes it (a double-quoted YAML string that
// reads back as the rule), and JSON arguments with escapes print as the
// canonical JSON the tool gets — no backslash doubled a second time.
func TestPolicyShowsRulesAndArgsAsWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := policyConfig(t)
	cfg = strings.Replace(cfg, "    - {tool: shell, args: 'rm -rf', decision: deny}",
		`    - {tool: shell, args: '\brm\s+-rf\b', decision: deny}`, 1)
	writeFile(t, dir, "config.yaml", cfg)
	const rule = `#1 {tool: shell, args: "\\brm\\s+-rf\\b", decision: deny}`

	r := runOnce(t, dir, baseEnv(dir), "", "policy", "explain")
	if r.code != exitOK || !strings.Contains(r.stdout, "\n"+rule+"\n") {
		t.Errorf("explain: exit %d; want 0 and the line %q:\n%s%s", r.code, rule, r.stdout, r.stderr)
	}

	r = runOnce(t, dir, baseEnv(dir), "", "policy", "test", "-tool", "shell", "-args", `{"command":"rm -rf\tx\\y"}`)
	for _, w := range []string{"rule:         " + rule + "\n", `arguments:    {"command":"rm -rf\tx\\y"}` + "\n"} {
		if r.code != exitDeny || !strings.Contains(r.stdout, w) {
			t.Errorf("test: exit %d; want %d and %q:\n%s%s", r.code, exitDeny, w, r.stdout, r.stderr)
		}
	}

	writeFile(t, dir, "cases.yaml", "cases:\n  - name: tab\n    tool: shell\n    args: {command: \"rm -rf\\tx\"}\n    want: deny\n")
	r = runOnce(t, dir, baseEnv(dir), "", "policy", "test", "-cases", "cases.yaml")
	if w := `ok   tab: shell {"command":"rm -rf\tx"} → deny by ` + rule + "\n"; r.code != exitOK || !strings.Contains(r.stdout, w) {
		t.Errorf("cases: exit %d; want 0 and %q:\n%s%s", r.code, w, r.stdout, r.stderr)
	}
}

// TestPolicyTestSecretGate: as in the running bot, a call whose arguments
// hold one of the bot's secrets is denied by the secret gate before any
// rule (exit 4, rule "secret gate"), in -tool and in -cases, and the
// secret is not printed; the same call without it is judged by the rules.
func TestPolicyTestSecretGate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", policyConfig(t))
	env := baseEnv(dir, "SERVICE_TOKEN="+envTokenSecret)
	leak := `{"url":"https://example.com/?t=` + envTokenSecret + `"}`

	r := runOnce(t, dir, env, "", "policy", "test", "-tool", "http_get", "-args", leak)
	if r.code != exitDeny || !strings.Contains(r.stdout, "rule:         secret gate\n") || !strings.Contains(r.stdout, "reason:       the arguments contain one of the bot's secrets") {
		t.Errorf("exit %d; want %d by the secret gate:\n%s%s", r.code, exitDeny, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, envTokenSecret) {
		t.Errorf("the secret was printed:\n%s%s", r.stdout, r.stderr)
	}
	r = runOnce(t, dir, env, "", "policy", "test", "-tool", "http_get", "-args", `{"url":"https://example.com/"}`)
	if r.code != exitOK {
		t.Errorf("without the secret: exit %d; want 0:\n%s%s", r.code, r.stdout, r.stderr)
	}

	writeFile(t, dir, "cases.yaml", "cases:\n  - name: leak\n    tool: http_get\n    args: {url: \"https://example.com/?t="+envTokenSecret+"\"}\n    want: allow\n")
	r = runOnce(t, dir, env, "", "policy", "test", "-cases", "cases.yaml")
	if r.code != exitFail || !strings.Contains(r.stdout, "FAIL leak: http_get ") || !strings.Contains(r.stdout, "→ deny by secret gate, want allow") {
		t.Errorf("cases: exit %d; want %d, the case denied by the secret gate:\n%s%s", r.code, exitFail, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, envTokenSecret) {
		t.Errorf("the secret was printed:\n%s%s", r.stdout, r.stderr)
	}
}

// TestPolicyTestRefusesRepeatedKeys: a key given twice, at any depth, is
// refused as the running bot refuses it (exit 2, the key named on stderr),
// for a built-in tool and an MCP tool alike; canonicalising first judged
// {"command":"echo FIRST","command":"echo SECOND"} as the second.
func TestPolicyTestRefusesRepeatedKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", policyConfig(t))
	cases := []struct{ name, tool, args, want string }{
		{"shell", "shell", `{"command":"echo FIRST","command":"echo SECOND"}`, `key "command" given twice at the top level`},
		{"MCP", "mcp__github__get_issue", `{"n":1,"n":2}`, `key "n" given twice at the top level`},
		{"MCP nested", "mcp__github__get_issue", `{"q":{"labels":[{"name":"a","name":"b"}]}}`, `key "name" given twice in the object at q.labels[0]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runOnce(t, dir, baseEnv(dir), "", "policy", "test", "-tool", c.tool, "-args", c.args)
			if r.code != exitConfig || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
				t.Fatalf("exit %d; want %d and stderr saying %q\nstdout:\n%s\nstderr:\n%s", r.code, exitConfig, c.want, r.stdout, r.stderr)
			}
		})
	}
	// In a table of cases, args is a YAML mapping: YAML refuses a repeated
	// key itself; the case names it.
	writeFile(t, dir, "cases.yaml", "cases:\n  - name: twice\n    tool: shell\n    args: {command: echo FIRST, command: echo SECOND}\n    want: allow\n")
	r := runOnce(t, dir, baseEnv(dir), "", "policy", "test", "-cases", "cases.yaml")
	if r.code != exitConfig || !strings.Contains(r.stderr, "command") {
		t.Fatalf("cases with a repeated key: exit %d; want %d naming the key\nstdout:\n%s\nstderr:\n%s", r.code, exitConfig, r.stdout, r.stderr)
	}
}
