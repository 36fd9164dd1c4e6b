package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// renderConfig writes the configuration bot init gathered: the secrets
// as ${VAR} (their values go to .env), everything else as answered, and
// a comment pointing to the shipped config.yaml for the other keys.
func renderConfig(t gatewayChoices, plan *initPlan) string {
	var b strings.Builder
	b.WriteString(`# gatehouse configuration, written by bot init. The secrets are in .env
# beside this file (${VAR} expands from the environment, then from .env).
# Every other key, with its default, is documented in the project's
# config.yaml; bot doctor checks this file, SIGHUP reloads it.

llm:
  providers:
`)
	fmt.Fprintf(&b, "    - name: %s\n      base_url: %s\n      api_key: ${%s}\n      model: %s\n",
		yamlString(plan.llm.name), yamlString(plan.llm.baseURL), llmEnv, yamlString(plan.llm.model))
	b.WriteString("\ngateways:\n")
	if term, ok := t.terminal(); ok {
		fmt.Fprintf(&b, "  %s: {enabled: %v}            # this terminal's chat\n", term.Name, plan.terminal)
	}
	for _, name := range plan.gateways {
		s, _ := t.byName(name)
		fmt.Fprintf(&b, "  %s:\n", name)
		for _, sec := range s.Setup.Secrets {
			fmt.Fprintf(&b, "    %s: ${%s}\n", sec.Key, sec.Env)
		}
		if u := plan.apiURLs[name]; u != "" {
			fmt.Fprintf(&b, "    %s: %s\n", s.Setup.URLKey, yamlString(u))
		}
		b.WriteString("    allow: []                  # who may talk besides the approvers: ids, as /whoami tells them\n")
	}
	b.WriteString("\nhitl:\n")
	quoted := make([]string, len(plan.approvers))
	for i, a := range plan.approvers {
		quoted[i] = yamlString(a)
	}
	fmt.Fprintf(&b, "  approvers: [%s]   # gateway:id; /whoami tells a person theirs\n", strings.Join(quoted, ", "))
	b.WriteString(`
policy:
  rules:                        # first match wins; no match: read-only tools run, others wait for approval
    - {tool: shell, decision: approve}
    - {tool: write_file, decision: approve}

tools:
  workspace: ./workspace        # relative paths are relative to this file's directory

store:
  driver: sqlite
  dsn: gatehouse.db

`)
	fmt.Fprintf(&b, "http:\n  listen: %s          # /healthz /readyz /metrics; empty disables\n", yamlString(plan.listen))
	return b.String()
}

// yamlString quotes s as a YAML double-quoted scalar (JSON's string syntax
// is one), so that no answer can change the file's structure, with $
// written $$ so that none expands as ${VAR}.
func yamlString(s string) string {
	b, _ := json.Marshal(strings.ReplaceAll(s, "$", "$$")) //nolint:errchkjson // a string always marshals
	return string(b)
}
