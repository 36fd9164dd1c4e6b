package app_test

import (
	"strings"
	"testing"

	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// TestWriteSkillRequestShowsSkillMD: write_skill's request, in the
// conversation that asked and in hitl.notify, and /show of it, show the
// whole SKILL.md as it will be written (its front matter and body) and
// every file with its path, not only the call's arguments.
func TestWriteSkillRequestShowsSkillMD(t *testing.T) {
	dir := t.TempDir()
	b := startReloadBot(t, skillsSections(dir, ""))
	args := `{"name":"rotate-cert","description":"Rotate the TLS certificate.","body":"# Rotate\nRun ROTATE-BODY.\n",` +
		`"files":{"scripts/rotate.sh":"echo ROTATE-SCRIPT\n"}}`
	b.ai.Respond(func(r fakeoai.Request) fakeoai.Step {
		if startsRun(r, "remember this") {
			return fakeoai.ToolCalls(fakeoai.Call{ID: "w1", Name: "write_skill", Args: args})
		}
		return fakeoai.Text("an answer")
	})
	got := b.say("1", "remember this")
	m := approveToken.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("write_skill was not held: %q", got)
	}
	const skillMD = "---\nname: rotate-cert\ndescription: Rotate the TLS certificate.\n---\n# Rotate\nRun ROTATE-BODY.\n"
	for what, text := range map[string]string{
		"the request":               got,
		"the request in the notify": b.gw.sent("telegram:9"),
		"/show":                     b.say("9", "/show "+m[1]),
	} {
		wantContains(t, what, text, "SKILL.md", skillMD, "scripts/rotate.sh", "echo ROTATE-SCRIPT\n")
	}
}

// TestToolsListsSkillWhereOffered: /tools lists the skill tool only in a
// conversation that is offered it (one with an enabled skill it may
// use): not while the skill is pending, nor in the ops profile's
// conversations (skills: [cert-*]); write_skill is listed everywhere.
func TestToolsListsSkillWhereOffered(t *testing.T) {
	b := startReloadBot(t, skillsSections(skillsDir(t), ""))
	const line = "\nskill — built-in — allow"
	got := b.say("1", "/tools")
	wantContains(t, "/tools with the skill pending", got, "write_skill — built-in — approve (always)")
	if strings.Contains(got, line) {
		t.Errorf("/tools with the skill pending lists the skill tool:\n%s", got)
	}
	wantContains(t, "/skill enable", b.say("9", "/skill restart-billing enable"), "enabled")
	wantContains(t, "/tools with the skill enabled", b.say("1", "/tools"), line)
	if got := b.say("2", "/tools"); strings.Contains(got, line) {
		t.Errorf("/tools in the ops profile (skills: [cert-*]) lists the skill tool:\n%s", got)
	}
}
