package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/gatehouse-bot/gatehouse/skills"
)

// exampleFile matches an example skill's file in skills.md: a marker
// naming its path, then a fenced block.
var exampleFile = regexp.MustCompile("(?s)<!-- example-skill:([^ ]+) -->\n```[a-z]*\n(.*?)\n```")

// TestSkillsExampleLoads: the example runbook skill of skills.md, written
// to a folder, loads and meets the specification with no warning (an
// example in the docs is code).
func TestSkillsExampleLoads(t *testing.T) {
	page, err := os.ReadFile("skills.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := exampleFile.FindAllSubmatch(page, -1)
	if len(files) != 2 {
		t.Fatalf("found %d example files in skills.md; want SKILL.md and the script", len(files))
	}
	for _, m := range files {
		p := filepath.Join(dir, "restart-billing", filepath.FromSlash(string(m[1])))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, append(m[2], '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sk, probs := skills.LoadOne(dir, "restart-billing")
	if sk == nil || len(probs) != 0 {
		t.Fatalf("the example skill: loaded %v, problems %v", sk != nil, probs)
	}
	if sk.AllowedTools != "Bash(systemctl:*) Read" || sk.Metadata["owner"] != "payments-oncall" || len(sk.Files) != 2 {
		t.Errorf("the example skill read as %+v", sk)
	}
}
