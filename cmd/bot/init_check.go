package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
	"github.com/gatehouse-bot/gatehouse/internal/dotenv"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// initSection builds gateway s's section as the bot will read it from
// what bot init writes: its credentials as ${VAR} taken from values (VAR →
// value), its API URL when not the default. The error has the values
// redacted.
func initSection(s confkit.Spec, values map[string]string, apiURL string) (gateways.Section, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "gateways:\n  %s:\n", s.Name)
	for _, sec := range s.Setup.Secrets {
		fmt.Fprintf(&b, "    %s: ${%s}\n", sec.Key, sec.Env)
	}
	if apiURL != "" {
		fmt.Fprintf(&b, "    %s: %s\n", s.Setup.URLKey, yamlString(apiURL))
	}
	var vals []string
	env := make([]dotenv.Entry, 0, len(values))
	for k, v := range values {
		env = append(env, dotenv.Entry{Name: k, Value: v})
		vals = append(vals, v)
	}
	cfg, err := config.Parse([]byte(b.String()), dotenv.Lookup(func(string) (string, bool) { return "", false }, env), gatewaytable.Specs())
	if err != nil {
		return nil, fmt.Errorf("%s", secrets.New(vals...).Redact(err.Error()))
	}
	sec, ok := cfg.Gateways.Section(s.Name).(gateways.Section)
	if !ok {
		return nil, fmt.Errorf("%s: not a gateway section", s.Name)
	}
	return sec, nil
}

// badCredential is a credential bot init was given that `bot doctor`
// would call a problem: a token of the wrong shape or kind.
type badCredential struct {
	secret  confkit.SetupSecret
	problem string // doctor's text: it names the key and the variable, never the value
}

// credentialProblems checks the credentials of s as `bot doctor` does
// (the section's own Doctor, offline), so that bot init does not write a
// token doctor then says the bot cannot run with. Each problem is given
// with the credential it names by its variable; one that names none is
// given with every credential, its variable put first.
func credentialProblems(s confkit.Spec, values map[string]string, apiURL string) []badCredential {
	sec, err := initSection(s, values, apiURL)
	var problems []string
	if err != nil {
		problems = []string{err.Error()}
	} else {
		problems = sec.Doctor().Problems
	}
	var bad []badCredential
	for _, p := range problems {
		named := false
		for _, c := range s.Setup.Secrets {
			if strings.Contains(p, "("+c.Env+")") {
				bad, named = append(bad, badCredential{c, p}), true
			}
		}
		if !named {
			for _, c := range s.Setup.Secrets {
				bad = append(bad, badCredential{c, c.Env + ": " + p})
			}
		}
	}
	return bad
}

// maxQuoted is how many characters of a wrong answer an error quotes:
// enough to recognise it, too few to give away a secret pasted at the
// wrong question.
const maxQuoted = 8

// quoteAnswer quotes an answer for an error message. One shaped like a
// well-known key or token (the redaction's check) is not quoted at all;
// any other only up to its first maxQuoted characters, since a secret of
// a shape the redaction does not know (some platforms' tokens, a mistyped
// one) would otherwise reach the terminal's scrollback or a CI log in
// full.
func quoteAnswer(a string) string {
	if secrets.LooksLikeKey(a) {
		return "(an answer shaped like a token or key, not shown)"
	}
	if r := []rune(a); len(r) > maxQuoted {
		return strconv.Quote(string(r[:maxQuoted]) + "…")
	}
	return strconv.Quote(a)
}
