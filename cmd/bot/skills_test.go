package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkillsDoctorAndCLI: through the binary, bot doctor warns of each
// skill not loaded, naming it, the field and the rule (a name of 65
// characters, a name unlike its folder, a symlink to /etc), shows a
// loaded one pending with its allowed-tools beside what the policy
// decides; bot skills approve enables it as the local operator (audited)
// and bot skills list then shows it enabled.
func TestSkillsDoctorAndCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t)+"\nskills:\n  dirs: [skills]\n")
	long := strings.Repeat("a", 65)
	writeFile(t, dir, "skills/restart-billing/SKILL.md", "---\nname: restart-billing\ndescription: Restart billing.\n"+
		"allowed-tools: Bash(systemctl:*) Read\n---\nSteps.\n")
	writeFile(t, dir, "skills/"+long+"/SKILL.md", "---\nname: "+long+"\ndescription: d\n---\n")
	writeFile(t, dir, "skills/wrong-folder/SKILL.md", "---\nname: other-name\ndescription: d\n---\n")
	writeFile(t, dir, "skills/etc-link/SKILL.md", "---\nname: etc-link\ndescription: d\n---\n")
	if err := os.Symlink("/etc", filepath.Join(dir, "skills", "etc-link", "etc")); err != nil {
		t.Fatal(err)
	}
	r := runOnce(t, dir, baseEnv(dir), "", "doctor")
	if r.code != exitOK {
		t.Fatalf("doctor exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		`skill "` + long + `" (not loaded): name: 65 characters, over the 64 allowed`,
		`skill "wrong-folder" (not loaded): name: must equal the folder's name "wrong-folder"`,
		`skill "etc-link" (not loaded): files: etc is a symlink that leads out of the skill's folder`,
		"restart-billing: pending, 1 files, digest ",
		"hitl.notify is empty: a new or changed skill's approval request reaches nobody",
		`restart-billing: allowed-tools "Bash(systemctl:*) Read" widens nothing; the policy decides: shell approve (#1 {tool: shell, decision: approve}); read_file allow (default: read-only tool)`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor does not say %q:\n%s", want, r.stdout)
		}
	}
	if r := runOnce(t, dir, baseEnv(dir), "", "skills", "approve", "wrong-folder"); r.code != exitFail || !strings.Contains(r.stderr, "no such skill") {
		t.Errorf("approve of a skill not loaded: exit %d, %s", r.code, r.stderr)
	}
	r = runOnce(t, dir, baseEnv(dir), "", "skills", "approve", "restart-billing")
	if r.code != exitOK || !strings.Contains(r.stdout, "skill restart-billing enabled at digest") {
		t.Fatalf("skills approve: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runOnce(t, dir, baseEnv(dir), "", "skills", "list")
	if r.code != exitOK || !strings.Contains(r.stdout, "restart-billing\tenabled\tdigest ") || !strings.Contains(r.stdout, `skill "wrong-folder" (not loaded)`) {
		t.Errorf("skills list: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runOnce(t, dir, baseEnv(dir), "", "audit", "-tool", "skill")
	if !strings.Contains(r.stdout, "skill-enabled") || !strings.Contains(r.stdout, "local:operator") {
		t.Errorf("audit: %s\n%s", r.stdout, r.stderr)
	}
}
