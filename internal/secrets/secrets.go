// Package secrets knows the bot's secrets (tokens, API keys) and removes them
// from text: log lines, tool output, replies and child-process environments.
package secrets

import (
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Mask replaces a secret wherever one is removed.
const Mask = "[" + maskWord + "]"

// maskWord is Mask's run of word characters.
const maskWord = "REDACTED"

// minLen is the shortest value treated as a secret: shorter ones would mask
// ordinary words.
const minLen = 6

// keyPattern matches well-known API key and token shapes, whether or not the
// bot holds them: OpenAI/Anthropic/OpenRouter keys, Slack tokens, chat-bot tokens of the
// digits:AA… shape, GitHub tokens, AWS access key ids, Google API keys.
var keyPattern = regexp.MustCompile(
	`sk-[A-Za-z0-9_-]{20,}` +
		`|xox[abposr]-[A-Za-z0-9-]{10,}` +
		`|xapp-[A-Za-z0-9-]{10,}` +
		`|\b\d{6,12}:AA[A-Za-z0-9_-]{30,}` +
		`|gh[pousr]_[A-Za-z0-9]{30,}` +
		`|\bAKIA[0-9A-Z]{16}\b` +
		`|AIza[0-9A-Za-z_-]{35}`)

// Set is an immutable set of secret values. The zero value and nil hold none.
type Set struct {
	values int // how many secrets
	// forms are the secrets and their encoded forms (see Forms), longest
	// first, so a form containing another is masked whole.
	forms []form
}

// form is one string to mask. word says it is made of word characters
// only (see isWord), as hex and base64 forms are: it can only occur in a
// text whose longest run of word characters is at least as long, which
// spares most searches in prose and logs.
type form struct {
	s    string
	word bool
}

// New returns a Set of the given values; empty and very short values are
// ignored. The encoded forms of each secret are computed here, once.
func New(values ...string) *Set {
	s := &Set{}
	var seen []string
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) < minLen || slices.Contains(seen, v) {
			continue
		}
		seen = append(seen, v)
		for _, f := range Forms(v) {
			if !slices.ContainsFunc(s.forms, func(g form) bool { return g.s == f }) {
				s.forms = append(s.forms, form{s: f, word: wordOnly(f)})
			}
		}
	}
	s.values = len(seen)
	// sort.SliceStable: see TestReleaseSortsShareOneShape (internal/archtest).
	sort.SliceStable(s.forms, func(i, j int) bool { return len(s.forms[j].s) < len(s.forms[i].s) })
	return s
}

// skip reports that f cannot occur in text: it is word-only and longer
// than text's longest run of word characters, *run, which skip computes
// at its first use (a negative *run means not yet). Masking joins no runs
// (the mask's brackets end one) and adds only the mask's own "REDACTED",
// so a run measured before masking, or that, bounds the runs after it.
func skip(f form, text string, run *int) bool {
	if !f.word {
		return false
	}
	if *run < 0 {
		*run = max(longestWordRun(text), len(maskWord))
	}
	return len(f.s) > *run
}

// Len reports how many secrets the set holds.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return s.values
}

// Contains reports whether text contains one of the secrets, in any of the
// forms Forms lists.
func (s *Set) Contains(text string) bool {
	if s == nil {
		return false
	}
	run := -1
	for _, f := range s.forms {
		if !skip(f, text, &run) && strings.Contains(text, f.s) {
			return true
		}
	}
	return false
}

// Redact returns text with every secret, each of its encoded forms (see
// Forms), and every string shaped like a well-known API key replaced by
// Mask. It returns text itself, without allocating, when there is nothing
// to remove.
func (s *Set) Redact(text string) string {
	if s != nil {
		run := -1
		for _, f := range s.forms {
			if !skip(f, text, &run) && strings.Contains(text, f.s) {
				text = strings.ReplaceAll(text, f.s, Mask)
			}
		}
	}
	if LooksLikeKey(text) {
		text = keyPattern.ReplaceAllString(text, Mask)
	}
	return text
}

// keyLiterals are the fixed strings of which every match of keyPattern
// holds one. Checking for them first spares the regular expression, the
// slow part of Redact, on the text that holds none: almost all of it.
var keyLiterals = []string{"sk-", "xox", "xapp-", ":AA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "AKIA", "AIza"}

// LooksLikeKey reports whether text contains a string shaped like a
// well-known API key or token.
func LooksLikeKey(text string) bool {
	for _, lit := range keyLiterals {
		if strings.Contains(text, lit) {
			return keyPattern.MatchString(text)
		}
	}
	return false
}

// Leaks reports whether text contains a secret of the set or a string shaped
// like an API key.
func (s *Set) Leaks(text string) bool {
	return s.Contains(text) || LooksLikeKey(text)
}

// SecretEnvName reports whether an environment variable's name says it holds
// a secret (…_TOKEN, …_KEY, …_SECRET, …PASSWORD…, …_DSN), case-insensitive.
func SecretEnvName(name string) bool {
	n := strings.ToUpper(name)
	for _, suffix := range []string{"_TOKEN", "_KEY", "_SECRET", "_DSN", "_CREDENTIALS"} {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	return strings.Contains(n, "PASSWORD") || strings.Contains(n, "PASSWD") || n == "TOKEN" || n == "API_KEY"
}

// FromEnv returns the values of environment entries ("NAME=value") whose
// names say they hold secrets, for adding to a Set.
func FromEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && value != "" && SecretEnvName(name) {
			out = append(out, value)
		}
	}
	return out
}
