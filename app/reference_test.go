package app

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestConfigurationReferenceReloads: the "reloads" column of
// docs/configuration.md says yes exactly for the keys Reload applies (as
// restartKeys decides: reloadable, a gateway's allow and pairing, a
// provider's price) and no for every key it logs as needing a restart.
// config's TestConfigurationReferenceHasEveryKey checks that every key
// has its row.
func TestConfigurationReferenceReloads(t *testing.T) {
	b, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `([^`]+)` \\|[^|]*\\|[^|]*\\| (yes|no)\\b")
	n := 0
	for i, line := range strings.Split(string(b), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n++
		key := strings.ReplaceAll(m[1], "[]", "[0]")
		if got, want := m[2] == "yes", reloads(key); got != want {
			t.Errorf("docs/configuration.md:%d: %s reloads: %s; Reload %s", i+1, m[1], m[2],
				map[bool]string{true: "applies it (yes)", false: "logs it as needing a restart (no)"}[want])
		}
	}
	if n < 50 {
		t.Fatalf("read only %d rows of docs/configuration.md", n)
	}
}

// reloads reports whether Reload applies key: restartKeys names no key
// below a reloadable one.
func reloads(key string) bool {
	if isPrice.MatchString(key) {
		return true
	}
	for i := range key {
		if key[i] != '.' && key[i] != '[' {
			continue
		}
		if reloadable[key[:i]] || gatewayReloadable(key[:i]) {
			return true
		}
	}
	return reloadable[key] || gatewayReloadable(key)
}
