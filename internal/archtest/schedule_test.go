package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// setsSchedule matches a line that sets a field named Schedule: in a
// composite literal or by assignment.
var setsSchedule = regexp.MustCompile(`\bSchedule:\s|\.Schedule\s*=[^=]`)

// TestOnlyTheSchedulerSetsSignalSchedule: core.Signal.Schedule admits a
// message without an allow list, so only schedule may set it; a
// gateway (or anything else that builds signals) never does.
func TestOnlyTheSchedulerSetsSignalSchedule(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && path != root || filepath.ToSlash(rel) == "schedule" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if code, _, _ := strings.Cut(line, "//"); setsSchedule.MatchString(code) {
				t.Errorf("%s:%d sets Schedule outside schedule: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
