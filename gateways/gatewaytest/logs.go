package gatewaytest

import (
	"strings"
	"testing"
)

// NoSecrets fails t for each line of logs that holds one of secrets (a
// test's token, or a telling part of one, so that a token cut or encoded
// by a library is caught too). It shows the line with the secrets
// replaced, never the secret.
func NoSecrets(t testing.TB, logs string, secrets ...string) {
	t.Helper()
	for i, line := range strings.Split(logs, "\n") {
		shown, leaked := line, false
		for _, s := range secrets {
			if strings.Contains(shown, s) {
				leaked = true
				shown = strings.ReplaceAll(shown, s, "<secret>")
			}
		}
		if leaked {
			t.Errorf("a secret leaked into line %d of the logs: %s", i+1, shown)
		}
	}
}
