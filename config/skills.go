package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Skills configures skills in the Agent Skills format (skills).
type Skills struct {
	// Dirs are folders holding one folder per skill, relative to the
	// configuration file; outside tools.workspace (the sandbox lets
	// commands read them, never write them). The first is where
	// write_skill writes an approved skill. Empty: no skills.
	Dirs []string `yaml:"dirs"`
	// MaxListed bounds the skills listed to the model in one
	// conversation, 1..1000; default 50.
	MaxListed int `yaml:"max_listed"`
}

// defaultMaxListed is skills.max_listed's default.
const defaultMaxListed = 50

func (s *Skills) check(ch *checker) {
	ch.intRange("skills.max_listed", s.MaxListed, 1, 1000)
	for i, d := range s.Dirs {
		ch.required(fmt.Sprintf("skills.dirs[%d]", i), d)
	}
}

// resolve makes skills.dirs absolute, relative to dir, and refuses
// one inside tools.workspace (or holding it): commands write the
// workspace, and a skill's content must change only under an approver's
// eyes.
func (s *Skills) resolve(dir, workspace string) error {
	for i, d := range s.Dirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		s.Dirs[i] = filepath.Clean(d)
		if within(s.Dirs[i], workspace) || within(workspace, s.Dirs[i]) {
			return &Error{Key: fmt.Sprintf("skills.dirs[%d]", i),
				Msg: fmt.Sprintf("%s overlaps tools.workspace %s: skills must be outside it (commands write the workspace)", s.Dirs[i], workspace)}
		}
	}
	return nil
}

// within reports whether p is base or inside it.
func within(p, base string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
