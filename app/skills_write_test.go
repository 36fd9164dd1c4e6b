package app_test

import (
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
