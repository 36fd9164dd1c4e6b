package skills

import (
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// The specification's bounds, and ours on a skill's files.
const (
	MaxName          = 64
	MaxDescription   = 1024 // Unicode code points
	MaxCompatibility = 500
	// MaxSkillMD bounds SKILL.md.
	MaxSkillMD = 256 << 10
	// MaxSkillBytes bounds all of a skill's files together.
	MaxSkillBytes = 10 << 20
	// MaxSkillFiles bounds how many files a skill holds.
	MaxSkillFiles = 500
	// MaxFileShown bounds what the skill tool returns of one file.
	MaxFileShown = 64 << 10
	// PromptBudget bounds the bytes the skills' list adds to the system
	// prompt; skills past it are left out (with one warning).
	PromptBudget = 8 << 10
	// DefaultMaxListed is skills.max_listed's default.
	DefaultMaxListed = 50
)

// SkillFile is the name of a skill's instructions in its folder.
const SkillFile = "SKILL.md"

// Fields are the front matter's fields the specification defines.
type Fields struct {
	Name          string
	Description   string
	License       string
	Compatibility string
	Metadata      map[string]string
	// AllowedTools is the specification's allowed-tools, as written: it
	// widens nothing (the policy alone decides).
	AllowedTools string
}

// Skill is a skill folder that loaded and meets the specification.
type Skill struct {
	Fields
	// Body is SKILL.md after its front matter: the instructions.
	Body string
	// Dir is the folder's path.
	Dir string
	// Files are every file of the folder, by slash path, sorted.
	Files []File
	// Digest is the hex SHA-256 over the files' names and contents.
	Digest string
	// Modified is the latest modification time of its files.
	Modified time.Time
}

// File is one file of a skill.
type File struct {
	Path   string // slash-separated, relative to the skill's folder
	Size   int64
	SHA256 string // hex
}

// Short is the digest's first 12 hex digits, as /skills shows it.
func (s *Skill) Short() string { return short(s.Digest) }

func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

// Size is the bytes of all its files.
func (s *Skill) Size() int64 {
	var n int64
	for _, f := range s.Files {
		n += f.Size
	}
	return n
}

// Problem is why a skill was not loaded, or a warning about one: the
// skill (its folder's name), the field and the rule it breaks.
type Problem struct {
	Dir   string // the skills folder holding it
	Skill string
	Field string // "name", "description", "SKILL.md", "files", …
	Rule  string
	// Warning is set for what does not stop the skill loading (a field
	// the specification does not define).
	Warning bool
}

func (p Problem) String() string {
	what := "not loaded"
	if p.Warning {
		what = "warning"
	}
	if p.Field == "" {
		return fmt.Sprintf("skill %q (%s): %s", p.Skill, what, p.Rule)
	}
	return fmt.Sprintf("skill %q (%s): %s: %s", p.Skill, what, p.Field, p.Rule)
}

// sizeText writes n bytes as people read them: 640 B, 2.1 KB, 3.4 MB.
func sizeText(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1000/1000)
}

// textShown is untrusted text made safe to show on one line, cut to max
// runes.
func textShown(s string, max int) string { return textutil.Shorten(textutil.GraphicLine(s), max) }
