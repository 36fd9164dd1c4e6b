package record

import (
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// SkillState is what an approver decided of a skill: the exact content
// enabled (Digest, over every file of its folder), or the skill disabled.
// A skill whose files no longer match Digest is pending again.
type SkillState struct {
	Name    string
	Digest  string // hex SHA-256 of the content enabled (or last enabled)
	Enabled bool
	By      core.Identity // who decided; "local:operator" from the shell
	At      time.Time     // UTC
}
