package schedule

import (
	"regexp"
	"strings"
	"testing"
)

func TestCheckNameKeepsItsShape(t *testing.T) {
	// The rule was this regexp; names accepted before are accepted now,
	// and nothing else.
	was := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	for _, name := range []string{"", "a", "daily", "report.v2", "x_y-z", "-lead", ".hidden", "_x", strings.Repeat("n", 64), strings.Repeat("n", 65), "sp ace", "ünï", "a/b", "a:b"} {
		if got, want := CheckName(name) == nil, was.MatchString(name); got != want {
			t.Errorf("CheckName(%q) accepts: %v, want %v", name, got, want)
		}
	}
}
