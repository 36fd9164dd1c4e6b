package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/supervise"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

const (
	skillBody   = "BODY-MARKER: run scripts/restart.sh with the shell tool."
	skillScript = "echo restarted-billing\n"
)

// skillsDir writes restart-billing into a new skills folder.
func skillsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range map[string]string{
		"restart-billing/SKILL.md":           "---\nname: restart-billing\ndescription: Restart the billing service safely.\n---\n" + skillBody + "\n",
		"restart-billing/scripts/restart.sh": skillScript,
	} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// skillsSections allow telegram:1 and :2, make telegram:9 the approver
// (told of pending skills by hitl.notify), give telegram:2 a profile
// whose skills are cert-* only, and add rest.
func skillsSections(dir, rest string) string {
	return `
gateways: {console: {enabled: false}, telegram: {allow: ["1", "2"]}}
hitl: {approvers: ["telegram:9"], notify: ["telegram:9"]}
skills: {dirs: ["` + dir + `"]}
profiles: [{name: ops, match: ["telegram:2"], skills: ["cert-*"]}]
` + rest
}

// lastSystem is the system prompt of the fake's last request.
func lastSystem(t *testing.T, ai *fakeoai.Server) (string, fakeoai.Request) {
	t.Helper()
	r := lastRequest(t, ai)
	return r.Messages[0].Content, r
}

// TestSkillThroughTheApp: a pending skill is not listed and its approval
// request names its files; enabled, the model's request lists its name
// and description, not its body, with the skill tool; the model's skill
// call returns the body, and the turn runs the skill's script through
// shell, held by the policy and run once approved; one byte changed in the
// script makes it pending again (not listed, asked for again) until
// approved again; the ops profile's skills globs leave it out of its
// conversations.
func TestSkillThroughTheApp(t *testing.T) {
	dir := skillsDir(t)
	script := filepath.Join(dir, "restart-billing", "scripts", "restart.sh")
	b := startReloadBot(t, skillsSections(dir, ""))
	b.ai.Respond(func(r fakeoai.Request) fakeoai.Step {
		switch {
		case startsRun(r, "restart billing"):
			return fakeoai.ToolCalls(fakeoai.Call{ID: "s1", Name: "skill", Args: `{"name":"restart-billing"}`})
		case lastIsToolResult(r, "BODY-MARKER"):
			return fakeoai.ToolCalls(fakeoai.Call{ID: "s2", Name: "shell", Args: `{"command":"sh ` + script + `"}`})
		case strings.Contains(r.Messages[len(r.Messages)-1].Content, "restarted-billing"):
			return fakeoai.Text("billing restarted")
		}
		return fakeoai.Text("an answer")
	})

	testutil.WaitFor(t, "the approval request of the pending skill", func() bool {
		return strings.Contains(b.gw.sent("telegram:9"), "enable skill `restart-billing`: 2 files, SKILL.md")
	})
	wantContains(t, "the approval request", b.gw.sent("telegram:9"), "scripts/restart.sh 23 B", "/skill restart-billing enable ")
	b.say("1", "hello")
	if sys, r := lastSystem(t, b.ai); strings.Contains(sys, "restart-billing") || r.HasTool("skill") || !r.HasTool("write_skill") {
		t.Fatalf("pending: prompt %q, tools %s; want no skill listed, no skill tool", sys, toolNames(r))
	}
	wantContains(t, "/skills of a non-approver", b.say("1", "/skills"), "No skills here.")
	wantContains(t, "/skills of the approver", b.say("9", "/skills"), "restart-billing (pending, digest ")
	wantContains(t, "/skill enable by a non-approver", b.say("1", "/skill restart-billing enable"), "Only an approver")
	req := b.gw.sent("telegram:9")
	m := approveToken.FindStringSubmatch(req)
	if m == nil {
		t.Fatalf("the skill's request has no /approve TOKEN: %q", req)
	}
	wantContains(t, "/show of the skill's request: the whole content", b.say("9", "/show "+m[1]), skillBody, "echo restarted-billing\\n")
	wantContains(t, "/approve of the skill", b.say("9", "/approve "+m[1]), "Approved")

	var sys string
	var r fakeoai.Request
	testutil.WaitFor(t, "the skill enabled by /approve", func() bool {
		b.say("1", "hello")
		sys, r = lastSystem(t, b.ai)
		return strings.Contains(sys, "restart-billing")
	})
	if !strings.Contains(sys, "- restart-billing: Restart the billing service safely.") || strings.Contains(sys, "BODY-MARKER") || !r.HasTool("skill") {
		t.Fatalf("enabled: prompt %q, tools %s; want the name and description, not the body, and the skill tool", sys, toolNames(r))
	}
	b.say("2", "hello")
	if sys, r := lastSystem(t, b.ai); strings.Contains(sys, "restart-billing") || r.HasTool("skill") {
		t.Errorf("the ops profile (skills: [cert-*]) sees restart-billing: %q, %s", sys, toolNames(r))
	}

	got := b.say("1", "restart billing")
	m = approveToken.FindStringSubmatch(got)
	if m == nil || !strings.Contains(got, "shell") {
		t.Fatalf("the script's shell call was not held: %q", got)
	}
	wantContains(t, "the approval", b.say("9", "/approve "+m[1]), "Approved")
	testutil.WaitFor(t, "the answer after the script ran", func() bool { return strings.Contains(b.gw.sent("telegram:1"), "billing restarted") })

	// One byte of the script changed: pending again, asked for again.
	if err := os.WriteFile(script, []byte("echo restarted-billinG\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the changed skill left out of the prompt", func() bool {
		b.say("1", "hello")
		sys, _ := lastSystem(t, b.ai)
		return !strings.Contains(sys, "restart-billing")
	})
	testutil.WaitFor(t, "the changed skill's approval request", func() bool {
		return strings.Count(b.gw.sent("telegram:9"), "Approval needed: enable_skill") == 2
	})
	wantContains(t, "/skill enable again", b.say("9", "/skill restart-billing enable"), "enabled")
	b.say("1", "hello")
	if sys, _ := lastSystem(t, b.ai); !strings.Contains(sys, "restart-billing") {
		t.Errorf("approved again, not listed: %q", sys)
	}
	wantContains(t, "/skill disable", b.say("9", "/skill restart-billing disable"), "disabled")
	b.say("1", "hello")
	if sys, r := lastSystem(t, b.ai); strings.Contains(sys, "restart-billing") || r.HasTool("skill") {
		t.Errorf("disabled, still listed: %q", sys)
	}
}

// TestWriteSkillHeldWhateverThePolicy: under a rule that allows every
// tool, write_skill is held; the request shows the whole content and
// nothing is written before the approval; approved, the skill is written
// (0600) and enabled: the next request lists it.
func TestWriteSkillHeldWhateverThePolicy(t *testing.T) {
	dir := t.TempDir()
	b := startReloadBot(t, skillsSections(dir, `policy: {rules: [{tool: "*", decision: allow}]}`))
	args := `{"name":"rotate-cert","description":"Rotate the TLS certificate.","body":"Run ROTATE-BODY.",` +
		`"files":{"scripts/rotate.sh":"echo ROTATE-SCRIPT"}}`
	b.ai.Respond(func(r fakeoai.Request) fakeoai.Step {
		if startsRun(r, "remember this") {
			return fakeoai.ToolCalls(fakeoai.Call{ID: "w1", Name: "write_skill", Args: args})
		}
		return fakeoai.Text("an answer")
	})
	wantContains(t, "/tools under a \"*\": allow rule", b.say("1", "/tools"), "write_skill — built-in — approve (always)", "shell — built-in — allow")
	got := b.say("1", "remember this")
	m := approveToken.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("write_skill under a \"*\": allow rule was not held: %q", got)
	}
	wantContains(t, "the request", got, "write_skill", "ROTATE-BODY", "ROTATE-SCRIPT", "rotate-cert")
	if _, err := os.Stat(filepath.Join(dir, "rotate-cert")); !os.IsNotExist(err) {
		t.Fatalf("written before the approval: %v", err)
	}
	wantContains(t, "the approval", b.say("9", "/approve "+m[1]), "Approved")
	testutil.WaitFor(t, "the skill written", func() bool {
		_, err := os.Stat(filepath.Join(dir, "rotate-cert", "scripts", "rotate.sh"))
		return err == nil
	})
	fi, err := os.Stat(filepath.Join(dir, "rotate-cert", "SKILL.md"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("SKILL.md: %v, %v; want 0600", fi, err)
	}
	testutil.WaitFor(t, "the written skill listed", func() bool {
		b.say("1", "hello")
		sys, _ := lastSystem(t, b.ai)
		return strings.Contains(sys, "- rotate-cert: Rotate the TLS certificate.")
	})
}

// TestNoSkillsNoGrowth: without skills.dirs, the request has neither
// skill tool nor any skills text: it is what it was.
func TestNoSkillsNoGrowth(t *testing.T) {
	b := startReloadBot(t, `
gateways: {console: {enabled: false}, telegram: {allow: ["1"]}}
hitl: {approvers: ["telegram:9"]}`)
	b.say("1", "hello")
	sys, r := lastSystem(t, b.ai)
	if r.HasTool("skill") || r.HasTool("write_skill") || strings.Contains(sys, "Skills") {
		t.Errorf("without skills: prompt %q, tools %s", sys, toolNames(r))
	}
}

// TestSkillsReadableNeverWritable: a shell command (allowed by a rule)
// reads a skill's files, and its write into the skills folder is denied by
// the sandbox: the file is not created.
func TestSkillsReadableNeverWritable(t *testing.T) {
	if _, err := supervise.Support(); err != nil {
		t.Skipf("no Landlock sandbox here: %v", err)
	}
	dir := skillsDir(t)
	skill := filepath.Join(dir, "restart-billing")
	b := startReloadBot(t, skillsSections(dir, `policy: {rules: [{tool: shell, decision: allow}]}`))
	cmd := `cat ` + skill + `/SKILL.md; echo changed > ` + skill + `/scripts/restart.sh; echo new > ` + skill + `/new.txt; echo exit=$?`
	args, _ := json.Marshal(map[string]string{"command": cmd})
	b.ai.Respond(func(r fakeoai.Request) fakeoai.Step {
		if startsRun(r, "poke") {
			return fakeoai.ToolCalls(fakeoai.Call{ID: "p1", Name: "shell", Args: string(args)})
		}
		return fakeoai.Text("an answer")
	})
	b.say("1", "poke")
	testutil.WaitFor(t, "the command's result", func() bool { return lastIsToolResult(lastRequest(t, b.ai), "exit=") })
	out := lastRequest(t, b.ai).Messages[len(lastRequest(t, b.ai).Messages)-1].Content
	if !strings.Contains(out, "BODY-MARKER") || !strings.Contains(out, "ermission denied") {
		t.Errorf("the command's output %q; want the skill read and the writes denied", out)
	}
	if data, _ := os.ReadFile(filepath.Join(skill, "scripts", "restart.sh")); string(data) != skillScript {
		t.Errorf("the skill's script was changed: %q", data)
	}
	if _, err := os.Stat(filepath.Join(skill, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("a file was created in the skill's folder: %v", err)
	}
}
