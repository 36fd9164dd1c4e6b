package tools

import (
	"net/url"
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
// names say they hold one (secrets.SecretEnvName, secretNameParts), whose
// values contain one of set's secrets or are URLs with a password, or
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

// secretNameParts are fragments of variable names that say they hold a
// secret anywhere in the name (SECRET_KEY_BASE, DB_PASS, GITHUB_PAT), which
// secrets.SecretEnvName, going by suffixes for the redaction set, does not
// catch. A command loses nothing it needs by going without them.
var secretNameParts = []string{"SECRET", "PASS", "TOKEN", "APIKEY", "API_KEY", "CREDENTIAL", "PRIVATE_KEY"}

// keepEnv reports whether a variable may reach a child process.
func keepEnv(name, value string, set *secrets.Set, prefixes []string) bool {
	if secrets.SecretEnvName(name) || set.Contains(value) || secrets.LooksLikeKey(value) || hasURLPassword(value) {
		return false
	}
	upper := strings.ToUpper(name)
	if strings.HasSuffix(upper, "_PAT") {
		return false
	}
	for _, part := range secretNameParts {
		if strings.Contains(upper, part) {
			return false
		}
	}
	for _, list := range [][]string{llmPrefixes, prefixes} {
		for _, p := range list {
			if strings.HasPrefix(upper, strings.ToUpper(p)) {
				return false
			}
		}
	}
	return true
}

// hasURLPassword reports whether value is a URL with a password in it
// (https://user:password@proxy:3128, as in HTTPS_PROXY).
func hasURLPassword(value string) bool {
	if !strings.Contains(value, "://") {
		return false
	}
	u, err := url.Parse(value)
	if err != nil || u.User == nil {
		return false
	}
	_, set := u.User.Password()
	return set
}
