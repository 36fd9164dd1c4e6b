package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// namedOnlyAtHome lists gateways whose name no non-test Go file may mention
// outside the gateway's own package, the gateway table and the loopback
// fakes: config, doctor, the shell scrubber and wiring iterate over the
// table instead. allowed matches lines that use the word for something
// else.
var namedOnlyAtHome = []struct {
	name    string
	home    string
	allowed *regexp.Regexp
	// besides is a package that uses the word for something else.
	besides string
}{
	{name: "telegram", home: "gateways/telegram"},
	// "console" is also a value of log.format (a human-readable log line),
	// and the web console (webconsole, http.console) is no gateway.
	{name: "console", home: "gateways/console", besides: "webconsole",
		allowed: regexp.MustCompile(`"console"|FormatConsole|ConsoleWriter|console format|console on a terminal|console\(o\)|func console\(|(?i:web ?console)|http\.console|console_session|ConsoleSession|\bConsole\b`)},
}

func TestGatewayNamedOnlyInItsPackageAndTheTable(t *testing.T) {
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
			// The fakes and the bench tool (which drives the real binary
			// through the fake Telegram) are test infrastructure.
			if strings.HasPrefix(d.Name(), ".") && path != root || rel == "internal/fake" || rel == "app/gatewaytable" || rel == "cmd/gatehouse-bench" {
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
		for _, g := range namedOnlyAtHome {
			dir := filepath.ToSlash(filepath.Dir(rel))
			if under(dir, g.home) || (g.besides != "" && under(dir, g.besides)) { // a gateway names itself
				continue
			}
			for i, line := range strings.Split(string(b), "\n") {
				if strings.Contains(strings.ToLower(line), g.name) && (g.allowed == nil || !g.allowed.MatchString(line)) {
					t.Errorf("%s:%d names the %s gateway outside its package and the gateway table: %s", rel, i+1, g.name, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
