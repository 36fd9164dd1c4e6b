package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMCPServers(t *testing.T) {
	c := mustParse(t, `
mcp:
  servers:
    - name: files
      command: npx
      args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv/notes"]
      env: {NODE_ENV: production}
      cwd: /srv
      timeout: 10s
    - {name: web, url: "https://mcp.example/mcp", enabled: false, start_timeout: 5s}
`, noEnv)
	s := c.MCP.Servers
	if len(s) != 2 || s[0].Command != "npx" || len(s[0].Args) != 3 || s[0].Env["NODE_ENV"].Value() != "production" ||
		s[0].Cwd != "/srv" || s[0].Timeout.D() != 10*time.Second || !s[0].On() {
		t.Errorf("servers[0] = %+v", s[0])
	}
	if s[1].On() || s[1].StartTimeout.D() != 5*time.Second {
		t.Errorf("servers[1] = %+v", s[1])
	}
}

func TestMCPServerErrors(t *testing.T) {
	for _, tt := range []struct{ src, key, msg string }{
		{`{name: "a_b", command: x}`, "mcp.servers[0].name", "letters, digits and dashes"},
		{`{name: "", command: x}`, "mcp.servers[0].name", "letters, digits and dashes"},
		{`{name: a, command: x, url: "https://h/mcp"}`, "mcp.servers[0]", "not both"},
		{`{name: a}`, "mcp.servers[0]", "not both"},
		{`{name: a, url: "ftp://h"}`, "mcp.servers[0].url", ""},
		{`{name: a, url: "https://h/mcp", env: {A: b}}`, "mcp.servers[0]", "stdio"},
		{`{name: a, command: x, headers: {A: b}}`, "mcp.servers[0].headers", "Streamable HTTP"},
		{`{name: a, command: x, timeout: -1s}`, "mcp.servers[0].timeout", "negative"},
		{`{name: a, command: x, colour: red}`, "mcp.servers[0]", "colour"},
	} {
		_, err := Parse([]byte("mcp:\n  servers:\n    - "+tt.src+"\n"), noEnv, specs())
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(e.Key, tt.key) || !strings.Contains(e.Msg+e.Key, tt.msg) {
			t.Errorf("%s: got %v, want key %s msg ~%q", tt.src, err, tt.key, tt.msg)
		}
	}
	_, err := Parse([]byte("mcp:\n  servers:\n    - {name: a, command: x}\n    - {name: a, command: y}\n"), noEnv, specs())
	if err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate names: %v", err)
	}
}

// A header's credential is a secret on its own too: a server that echoes
// the token without its scheme ("invalid token mcp-hdr-JJJJ0000") must not
// show it.
func TestMCPHeaderCredentialIsASecret(t *testing.T) {
	got := secretConfig(t).Secrets()
	for _, want := range []string{"Bearer mcp-hdr-JJJJ0000", "mcp-hdr-JJJJ0000"} {
		if !slices.Contains(got, want) {
			t.Errorf("Secrets() = %q, want %q among them", got, want)
		}
	}
}
