package config

import (
	"strings"
	"testing"
)

// TestErrorsQuoteExpandedValuesAsWritten: a value ${VAR} expansion put in
// a key where it does not belong (a token in an integer, an enum) is
// quoted as written, never as what came from the environment — whole or
// cut to the quoted length.
func TestErrorsQuoteExpandedValuesAsWritten(t *testing.T) {
	const secret = "hunter2-correct-horse-battery-staple-0123456789-abcdef"
	for _, tt := range []struct{ name, src, key, want string }{
		{"integer", "engine: {queue: '${TOKEN}'}\n", "engine.queue", `got "${TOKEN}"`},
		{"duration", "llm: {timeout: '${TOKEN}'}\n", "llm.timeout", `"${TOKEN}"`},
		{"bool", "tools: {http: {allow_private: '${TOKEN}'}}\n", "tools.http.allow_private", `"${TOKEN}"`},
		{"enum, after decoding", "log: {level: '${TOKEN}'}\n", "log.level", `got "${TOKEN}"`},
		{"part of a value", "log: {level: 'x-${TOKEN}'}\n", "log.level", `got "x-${TOKEN}"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), env(map[string]string{"TOKEN": secret}), specs())
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.key) || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q; want %s and %s", msg, tt.key, tt.want)
			}
			for _, part := range []string{secret, secret[:20], "hunter2"} {
				if strings.Contains(msg, part) {
					t.Errorf("error %q shows %q from the environment", msg, part)
				}
			}
		})
	}
}
