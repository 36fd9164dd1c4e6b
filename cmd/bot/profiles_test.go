package main

import (
	"regexp"
	"strings"
	"syscall"
	"testing"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// profileYAML is a profiles section for the console's conversation.
func profileYAML(model, prompt string) string {
	return `profiles:
  - name: desk
    match: ["console:*"]
    model: ` + model + `
    system_prompt: "` + prompt + `"
    tools: [list_dir, read_file]
`
}

// sawRequest reports whether the fake has a request with model, whose
// system prompt is prompt and whose last user message is text.
func sawRequest(srv *fakeopenai.Server, model, prompt, text string) bool {
	for _, r := range srv.Requests() {
		if r.Model == model && len(r.Messages) > 0 && r.Messages[0].Content == prompt && r.LastUser() == text {
			return true
		}
	}
	return false
}

// TestProfileReloadThroughTheBinary: the console's messages go to its
// profile's model with its prompt and tools only; after SIGHUP with a
// changed profile, the next message goes to the new model and prompt.
func TestProfileReloadThroughTheBinary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := startFake(t, func(fakeopenai.Request) fakeopenai.Step { return fakeopenai.Text("MODEL: ok.") })
	base := fakeConfig(srv.URL(), "sk-profile-test", shellApprove, "info")
	writeFile(t, dir, "config.yaml", base+profileYAML("desk-model", "DESK ONE"))
	p := startBot(t, dir, baseEnv(dir))

	p.send("hello")
	expectLine(t, p, "MODEL: ok.")
	if !sawRequest(srv, "desk-model", "DESK ONE", "hello") {
		t.Fatalf("no request with the profile's model and prompt: %+v", srv.Requests())
	}
	r := srv.Requests()[0]
	if len(r.Tools) != 2 || !r.HasTool("list_dir") || !r.HasTool("read_file") {
		t.Errorf("the profile's request offers %d tools, want list_dir and read_file only", len(r.Tools))
	}

	writeFile(t, dir, "config.yaml", base+profileYAML("desk-model-2", "DESK TWO"))
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "config reloaded", func() bool { return strings.Contains(p.stderr.String(), "config reloaded") })
	if regexp.MustCompile(`profiles\S* changed; needs a restart`).MatchString(p.stderr.String()) {
		t.Errorf("a profile change is logged as needing a restart:\n%s", tail(p.stderr.String(), 2000))
	}
	p.send("hello again")
	testutil.WaitFor(t, "a request with the reloaded profile", func() bool {
		return sawRequest(srv, "desk-model-2", "DESK TWO", "hello again")
	})
	p.send("/status")
	expectLine(t, p, "Profile: desk")
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestProfileConfigErrorsExitTwo: a bad glob, an unknown provider and a
// duplicate name are refused by `bot doctor` and `bot` with the key named
// and exit 2.
func TestProfileConfigErrorsExitTwo(t *testing.T) {
	t.Parallel()
	base := fakeConfig("http://127.0.0.1:1/v1", "sk-profile-test", shellApprove, "info")
	for _, tt := range []struct{ profiles, key string }{
		{"profiles:\n  - {name: ops, match: [\"slack:C0OPS*\", \"discord:[1181\"]}\n", "profiles[0].match[1]"},
		{"profiles:\n  - {name: ops, match: [\"slack:C1\"], providers: [openai]}\n", "profiles[0].providers[0]"},
		{"profiles:\n  - {name: ops, match: [\"slack:C1\"]}\n  - {name: ops, match: [\"slack:C2\"]}\n", "profiles[1].name"},
		{"profiles:\n  - {name: ops, match: [\"slack:C1\"], tools: [\"[\"]}\n", "profiles[0].tools[0]"},
	} {
		dir := t.TempDir()
		writeFile(t, dir, "config.yaml", base+tt.profiles)
		for _, args := range [][]string{{"doctor"}, {}} {
			r := runOnce(t, dir, baseEnv(dir), "", args...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.key) {
				t.Errorf("bot %v with %s: exit %d, stderr %q; want 2 naming %s", args, tt.key, r.code, tail(r.stderr, 500), tt.key)
			}
		}
	}
}

// TestProfileDoctorAndPolicyTest: doctor lists the profile and warns of a
// tool glob that matches no tool (exit 0); `bot policy test
// -conversation` names the profile that applies and judges by its rules
// first; `bot policy explain` lists each profile's rules.
func TestProfileDoctorAndPolicyTest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := fakeConfig("http://127.0.0.1:1/v1", "sk-profile-test", shellApprove, "info")
	writeFile(t, dir, "config.yaml", base+`profiles:
  - name: ops
    match: ["slack:C0OPS*"]
    tools: [shell, list_dir, "mcp__github__*"]
    policy: {rules: [{tool: shell, args: '"command":"kubectl get ', decision: allow}]}
`)
	r := runOnce(t, dir, baseEnv(dir), "", "doctor")
	if r.code != 0 || !strings.Contains(r.stdout, "ops: slack:C0OPS*") ||
		!strings.Contains(r.stdout, `warning: profiles[0].tools[2]: mcp__github__* matches no tool`) {
		t.Errorf("doctor: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "warning: profiles[0].match[0]: slack is not enabled") {
		t.Errorf("doctor does not warn of a profile on a gateway that does not run:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "profiles[0].tools[0]") || strings.Contains(r.stdout, "profiles[0].tools[1]") {
		t.Errorf("doctor warns of a glob that matches a tool:\n%s", r.stdout)
	}

	kubectl := []string{"policy", "test", "-tool", "shell", "-args", `{"command":"kubectl get pods"}`, "-identity", "slack:U1"}
	r = runOnce(t, dir, baseEnv(dir), "", append(kubectl, "-conversation", "slack:C0OPS1")...)
	if r.code != 0 || !strings.Contains(r.stdout, "profile:      ops\n") || !strings.Contains(r.stdout, "rule:         profile ops #1 ") {
		t.Errorf("policy test in the profile: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runOnce(t, dir, baseEnv(dir), "", append(kubectl, "-conversation", "slack:C0DEV")...)
	if r.code == 0 || !strings.Contains(r.stdout, "profile:      none") || !strings.Contains(r.stdout, "decision:     approve") {
		t.Errorf("policy test outside the profile: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runOnce(t, dir, baseEnv(dir), "", "policy", "explain")
	if r.code != 0 || !strings.Contains(r.stdout, "profile ops (slack:C0OPS*; only shell, list_dir, mcp__github__*), its rules before policy.rules:\nprofile ops #1 {tool: shell") {
		t.Errorf("policy explain: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runOnce(t, dir, baseEnv(dir), "", "policy", "test", "-tool", "read_file", "-args", `{"path":"a"}`, "-identity", "slack:U1", "-conversation", "slack:C0OPS1")
	if r.code == 0 || !strings.Contains(r.stdout, "decision:     deny") || !strings.Contains(r.stdout, "unknown tool") {
		t.Errorf("policy test of a tool outside the profile: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
