package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkillsConfig: skills.dirs resolve against the configuration file's
// directory; one inside tools.workspace (or holding it) is refused,
// naming the key; max_listed is bounded; absent, there are no dirs and
// max_listed is 50.
func TestSkillsConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	load := func(yaml string) (*Config, error) {
		t.Helper()
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return Load(path, noEnv, specs())
	}
	c, err := load("")
	if err != nil || len(c.Skills.Dirs) != 0 || c.Skills.MaxListed != 50 {
		t.Fatalf("defaults: %+v, %v", c.Skills, err)
	}
	c, err = load("skills: {dirs: [skills, /srv/skills], max_listed: 5}\n")
	if err != nil || c.Skills.Dirs[0] != filepath.Join(dir, "skills") || c.Skills.Dirs[1] != "/srv/skills" || c.Skills.MaxListed != 5 {
		t.Fatalf("resolved: %+v, %v", c.Skills, err)
	}
	for _, tt := range []struct{ yaml, key, msg string }{
		{"skills: {dirs: [workspace/skills]}\n", "skills.dirs[0]", "overlaps tools.workspace"},
		{"tools: {workspace: skills/ws}\nskills: {dirs: [ok, skills]}\n", "skills.dirs[1]", "overlaps tools.workspace"},
		{"skills: {dirs: ['']}\n", "skills.dirs[0]", "required"},
		{"skills: {max_listed: 0}\n", "skills.max_listed", "1"},
		{"skills: {max_listed: 1001}\n", "skills.max_listed", "1000"},
	} {
		_, err := load(tt.yaml)
		var e *Error
		if !errors.As(err, &e) || e.Key != tt.key || !strings.Contains(e.Msg, tt.msg) {
			t.Errorf("%q: got %v; want key %s, ~%q", tt.yaml, err, tt.key, tt.msg)
		}
	}
}
