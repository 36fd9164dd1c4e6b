package tools

import (
	"os"
	"strings"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// llmPrefixes name the LLM providers' configuration variables. The
// gateways' own prefixes come from the gateway table (NewShell's
// envPrefixes). A command has no business reading either, even when they
// are not secret.
var llmPrefixes = []string{"OPENAI_"}

// scrubEnv returns the bot's environment without secrets: variables whose
// names say they hold one, whose values contain one of set's secrets, or
// that configure the bot's LLM or gateways (names starting with one of
// llmPrefixes or prefixes).
func scrubEnv(set *secrets.Set, prefixes []string) []string {
	env := os.Environ()
	out := env[:0]
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if keepEnv(name, value, set, prefixes) {
			out = append(out, kv)
		}
	}
	return out
}

// keepEnv reports whether a variable may reach a child process.
func keepEnv(name, value string, set *secrets.Set, prefixes []string) bool {
	if secrets.SecretEnvName(name) || set.Contains(value) || secrets.LooksLikeKey(value) {
		return false
	}
	upper := strings.ToUpper(name)
	for _, list := range [][]string{llmPrefixes, prefixes} {
		for _, p := range list {
			if strings.HasPrefix(upper, strings.ToUpper(p)) {
				return false
			}
		}
	}
	return true
}
