package tools

import (
	"os"
	"strings"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// platformPrefixes name the bot's own configuration variables, which a
// command has no business reading even when they are not secret.
var platformPrefixes = []string{"OPENAI_", "TELEGRAM_", "DISCORD_", "SLACK_"}

// scrubEnv returns the bot's environment without secrets: variables whose
// names say they hold one, whose values contain one of set's secrets, or
// that configure the bot's platforms.
func scrubEnv(set *secrets.Set) []string {
	env := os.Environ()
	out := env[:0]
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if keepEnv(name, value, set) {
			out = append(out, kv)
		}
	}
	return out
}

// keepEnv reports whether a variable may reach a child process.
func keepEnv(name, value string, set *secrets.Set) bool {
	if secrets.SecretEnvName(name) || set.Contains(value) || secrets.LooksLikeKey(value) {
		return false
	}
	upper := strings.ToUpper(name)
	for _, p := range platformPrefixes {
		if strings.HasPrefix(upper, p) {
			return false
		}
	}
	return true
}
