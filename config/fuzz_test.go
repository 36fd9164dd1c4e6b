package config

import (
	"errors"
	"os"
	"testing"
)

func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("testdata/default.yaml"); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		"", "llm: {providers: [{base_url: ${X}}]}", "a: &a [*a]", "log: {level: '${A:-${B}}'}",
		"gateways:\n  telegram: {enabled: true}\n", "x: !!binary aGk=", "- [", "policy: {rules: [{tool: '['}]}",
		allSecretsConfig, "tools: {timeouts: {'': 1s}}", "hitl: {approvers: [*x]}", "llm: &l {providers: [*l]}",
	} {
		f.Add([]byte(s))
	}
	lookup := env(map[string]string{"X": "http://h", "A": "info"})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, lookup, specs())
		if err != nil {
			if _, ok := errors.AsType[*Error](err); !ok {
				t.Fatalf("error is %T, not *Error: %v", err, err)
			}
			if c != nil {
				t.Fatal("config returned with an error")
			}
			return
		}
		if c.LLM.MaxSteps < 1 || c.Engine.Queue < 1 || c.Tools.Workspace == "" {
			t.Fatalf("invalid config accepted: %+v", c)
		}
	})
}
