package skills

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSkill writes files (path → content) into dir/name.
func writeSkill(t testing.TB, dir, name string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, name, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// md is a SKILL.md with the front matter fields given as YAML lines.
func md(fields ...string) string {
	return "---\n" + strings.Join(fields, "\n") + "\n---\n# Steps\nDo the thing.\n"
}

// TestSpecEdgeCases loads skills written to the specification's edge
// cases (every field, each limit, invalid names and descriptions, a
// folder without SKILL.md, front matter that is not YAML, a symlink out)
// and checks each is loaded or refused as the specification says, with
// the field and the rule named.
func TestSpecEdgeCases(t *testing.T) {
	name64 := strings.Repeat("a", 64)
	name65 := strings.Repeat("a", 65)
	desc1024 := strings.Repeat("é", 1024) // code points, not bytes
	cases := []struct {
		folder string
		files  map[string]string
		field  string // "" when it loads
		rule   string
		warn   string // a warning's field, when it loads with one
	}{
		{folder: "every-field", files: map[string]string{"SKILL.md": md("name: every-field", "description: All the fields.",
			"license: Apache-2.0", "compatibility: Needs bash and kubectl", "metadata:\n  author: ops\n  version: \"1.0\"",
			"allowed-tools: Bash(kubectl:*) Read"), "scripts/run.sh": "echo hi\n", "references/REF.md": "ref", "assets/a.txt": "x"}},
		{folder: name64, files: map[string]string{"SKILL.md": md("name: "+name64, "description: longest name")}},
		{folder: "a", files: map[string]string{"SKILL.md": md("name: a", "description: d")}},
		{folder: "desc-1024", files: map[string]string{"SKILL.md": md("name: desc-1024", "description: "+desc1024)}},
		{folder: "compat-500", files: map[string]string{"SKILL.md": md("name: compat-500", "description: d", "compatibility: "+strings.Repeat("c", 500))}},
		{folder: "unknown-field", files: map[string]string{"SKILL.md": md("name: unknown-field", "description: d", "version: 2")}, warn: "version"},
		{folder: name65, files: map[string]string{"SKILL.md": md("name: "+name65, "description: d")}, field: "name", rule: "65 characters, over the 64"},
		{folder: "Upper", files: map[string]string{"SKILL.md": md("name: Upper", "description: d")}, field: "name", rule: "only lowercase"},
		{folder: "-lead", files: map[string]string{"SKILL.md": md("name: -lead", "description: d")}, field: "name", rule: "begin or end with a hyphen"},
		{folder: "trail-", files: map[string]string{"SKILL.md": md("name: trail-", "description: d")}, field: "name", rule: "begin or end with a hyphen"},
		{folder: "dou--ble", files: map[string]string{"SKILL.md": md("name: dou--ble", "description: d")}, field: "name", rule: "two hyphens"},
		{folder: "under_score", files: map[string]string{"SKILL.md": md("name: under_score", "description: d")}, field: "name", rule: "only lowercase"},
		{folder: "other-folder", files: map[string]string{"SKILL.md": md("name: not-the-folder", "description: d")}, field: "name", rule: "equal the folder's name"},
		{folder: "no-name", files: map[string]string{"SKILL.md": md("description: d")}, field: "name", rule: "required"},
		{folder: "list-name", files: map[string]string{"SKILL.md": md("name: [a, b]", "description: d")}, field: "name", rule: "must be a string"},
		{folder: "no-desc", files: map[string]string{"SKILL.md": md("name: no-desc")}, field: "description", rule: "required"},
		{folder: "empty-desc", files: map[string]string{"SKILL.md": md("name: empty-desc", `description: "  "`)}, field: "description", rule: "must not be empty"},
		{folder: "desc-1025", files: map[string]string{"SKILL.md": md("name: desc-1025", "description: "+desc1024+"x")}, field: "description", rule: "1025 characters"},
		{folder: "compat-501", files: map[string]string{"SKILL.md": md("name: compat-501", "description: d", "compatibility: "+strings.Repeat("c", 501))}, field: "compatibility", rule: "501 characters"},
		{folder: "bad-metadata", files: map[string]string{"SKILL.md": md("name: bad-metadata", "description: d", "metadata: [1, 2]")}, field: "metadata", rule: "mapping of strings"},
		{folder: "nested-metadata", files: map[string]string{"SKILL.md": md("name: nested-metadata", "description: d", "metadata:\n  a: {b: c}")}, field: "metadata", rule: "mapping of strings"},
		{folder: "no-skill-md", files: map[string]string{"README.md": "# not a skill"}, field: "SKILL.md", rule: "missing"},
		{folder: "no-front-matter", files: map[string]string{"SKILL.md": "# Just Markdown\n"}, field: "front matter", rule: "must begin with"},
		{folder: "unclosed", files: map[string]string{"SKILL.md": "---\nname: unclosed\ndescription: d\n"}, field: "front matter", rule: "not closed"},
		{folder: "not-yaml", files: map[string]string{"SKILL.md": "---\nname: [unclosed\ndescription: : :\n---\nbody\n"}, field: "front matter", rule: "not YAML"},
		{folder: "not-mapping", files: map[string]string{"SKILL.md": "---\n- a\n- b\n---\nbody\n"}, field: "front matter", rule: "not a YAML mapping"},
		{folder: "twice", files: map[string]string{"SKILL.md": md("name: twice", "description: d", "name: twice")}, field: "name", rule: "given twice"},
		{folder: "big-md", files: map[string]string{"SKILL.md": md("name: big-md", "description: d") + strings.Repeat("x", MaxSkillMD)}, field: "SKILL.md", rule: "over 256 KiB"},
		{folder: "big-files", files: map[string]string{"SKILL.md": md("name: big-files", "description: d"),
			"assets/a.bin": strings.Repeat("x", MaxSkillBytes/2), "assets/b.bin": strings.Repeat("x", MaxSkillBytes/2)}, field: "files", rule: "over 10 MiB"},
		{folder: "many-files", files: manyFiles("many-files", MaxSkillFiles), field: "files", rule: "more than 500 files"},
		{folder: "max-files", files: manyFiles("max-files", MaxSkillFiles-1)},
	}
	dir := t.TempDir()
	for _, c := range cases {
		writeSkill(t, dir, c.folder, c.files)
	}
	// A symlink out of its folder, to /etc, and one that stays inside.
	writeSkill(t, dir, "link-out", map[string]string{"SKILL.md": md("name: link-out", "description: d")})
	if err := os.Symlink("/etc", filepath.Join(dir, "link-out", "etc")); err != nil {
		t.Fatal(err)
	}
	writeSkill(t, dir, "link-file-out", map[string]string{"SKILL.md": md("name: link-file-out", "description: d")})
	if err := os.Symlink("../a/SKILL.md", filepath.Join(dir, "link-file-out", "other.md")); err != nil {
		t.Fatal(err)
	}
	writeSkill(t, dir, "link-in", map[string]string{"SKILL.md": md("name: link-in", "description: d"), "scripts/run.sh": "echo\n"})
	if err := os.Symlink("scripts/run.sh", filepath.Join(dir, "link-in", "run.sh")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "folder-link")); err != nil {
		t.Fatal(err)
	}
	loaded, probs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Skill{}
	for _, s := range loaded {
		byName[s.Name] = s
	}
	for _, c := range cases {
		t.Run(c.folder[:min(len(c.folder), 20)], func(t *testing.T) {
			got := problemsOf(probs, c.folder)
			if c.field == "" {
				if byName[c.folder] == nil {
					t.Fatalf("%s not loaded: %v", c.folder, got)
				}
				for _, p := range got {
					if !p.Warning || p.Field != c.warn {
						t.Errorf("unexpected problem %v", p)
					}
				}
				if c.warn != "" && len(got) == 0 {
					t.Errorf("no warning about %s", c.warn)
				}
				return
			}
			if byName[c.folder] != nil {
				t.Fatalf("%s loaded; want it refused for %s: %s", c.folder, c.field, c.rule)
			}
			for _, p := range got {
				if !p.Warning && p.Field == c.field && strings.Contains(p.Rule, c.rule) {
					return
				}
			}
			t.Errorf("problems %v; want %s: …%s…", got, c.field, c.rule)
		})
	}
	t.Run("symlinks", func(t *testing.T) {
		if byName["link-file-out"] != nil || !hasRule(problemsOf(probs, "link-file-out"), "other.md is a symlink that leads out") {
			t.Errorf("a symlink to a file outside the folder: loaded %v, problems %v", byName["link-file-out"] != nil, problemsOf(probs, "link-file-out"))
		}
		if byName["folder-link"] != nil || !hasRule(problemsOf(probs, "folder-link"), "leads out of the skills folder") {
			t.Errorf("a skill folder that is a symlink to /etc: problems %v", problemsOf(probs, "folder-link"))
		}
		if byName["link-out"] != nil || !hasRule(problemsOf(probs, "link-out"), "etc is a symlink that leads out of the skill's folder") {
			t.Errorf("a symlink to /etc: problems %v", problemsOf(probs, "link-out"))
		}
		if s := byName["link-in"]; s == nil || len(s.Files) != 3 {
			t.Errorf("a symlink inside the folder: %v, problems %v", s, problemsOf(probs, "link-in"))
		}
	})
	if s := byName["every-field"]; s == nil || s.License != "Apache-2.0" || s.Metadata["version"] != "1.0" ||
		s.AllowedTools != "Bash(kubectl:*) Read" || s.Body != "# Steps\nDo the thing.\n" || len(s.Files) != 4 {
		t.Errorf("every field: %+v", s)
	}
}

// TestSymlinkToEtcIsRefused: a skill holding a symlink to /etc (a folder
// out of it) is not loaded, and the problem names the skill.
func TestSymlinkToEtcIsRefused(t *testing.T) {
	dir := t.TempDir()
	writeSkill(t, dir, "sneaky", map[string]string{"SKILL.md": md("name: sneaky", "description: d")})
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "sneaky", "passwd")); err != nil {
		t.Fatal(err)
	}
	loaded, probs, err := Load(dir)
	if err != nil || len(loaded) != 0 || !hasRule(problemsOf(probs, "sneaky"), "passwd is a symlink that leads out of the skill's folder") {
		t.Fatalf("loaded %d, problems %v, err %v; want sneaky refused for its symlink", len(loaded), probs, err)
	}
}

func manyFiles(name string, n int) map[string]string {
	files := map[string]string{"SKILL.md": md("name: "+name, "description: d")}
	for i := range n {
		files[fmt.Sprintf("refs/f%03d", i)] = "x"
	}
	return files
}

func problemsOf(probs []Problem, skill string) []Problem {
	var out []Problem
	for _, p := range probs {
		if p.Skill == skill {
			out = append(out, p)
		}
	}
	return out
}

func hasRule(probs []Problem, rule string) bool {
	for _, p := range probs {
		if strings.Contains(p.Rule, rule) {
			return true
		}
	}
	return false
}

// TestDigestCoversEveryByte: one byte changed in a script changes the
// digest; the same content in another folder has the same digest.
func TestDigestCoversEveryByte(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"SKILL.md": md("name: d1", "description: d"), "scripts/run.sh": "echo one\n"}
	writeSkill(t, dir, "d1", files)
	before, _ := LoadOne(dir, "d1")
	writeSkill(t, dir, "d1", map[string]string{"scripts/run.sh": "echo onE\n"})
	after, _ := LoadOne(dir, "d1")
	if before == nil || after == nil || before.Digest == after.Digest {
		t.Fatalf("digest before %v, after %v; want both, different", before, after)
	}
}
