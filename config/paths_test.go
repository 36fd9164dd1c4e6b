package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadResolvesPathsAgainstTheConfigFile: relative tools.workspace and
// store.dsn (plain or a file: URI) resolve against the configuration file's
// directory, whatever the working directory; absolute ones and in-memory
// names stay as written.
func TestLoadResolvesPathsAgainstTheConfigFile(t *testing.T) {
	dir := t.TempDir()
	etc := filepath.Join(dir, "etc", "gatehouse")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	cases := []struct {
		yaml, workspace, dsn string
	}{
		{"", filepath.Join(etc, "workspace"), filepath.Join(etc, "gatehouse.db")},
		{"tools: {workspace: ../ws}\nstore: {dsn: data/bot.db}\n", filepath.Join(dir, "etc", "ws"), filepath.Join(etc, "data", "bot.db")},
		{"tools: {workspace: /srv/ws}\nstore: {dsn: /var/lib/g.db}\n", "/srv/ws", "/var/lib/g.db"},
		{"store: {dsn: 'file:g.db?_pragma=x'}\n", filepath.Join(etc, "workspace"), "file:" + filepath.Join(etc, "g.db") + "?_pragma=x"},
		{"store: {dsn: 'file:/abs/g.db'}\n", filepath.Join(etc, "workspace"), "file:/abs/g.db"},
		{"store: {dsn: ':memory:'}\n", filepath.Join(etc, "workspace"), ":memory:"},
		{"store: {driver: postgres, dsn: 'host=db user=bot'}\n", filepath.Join(etc, "workspace"), "host=db user=bot"},
	}
	for _, tc := range cases {
		path := filepath.Join(etc, "config.yaml")
		if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		// Relative -config too: "etc/gatehouse/config.yaml" from dir.
		for _, arg := range []string{path, filepath.Join("etc", "gatehouse", "config.yaml")} {
			c, err := Load(arg, noEnv, specs())
			if err != nil {
				t.Fatalf("Load(%s) with %q: %v", arg, tc.yaml, err)
			}
			if c.Tools.Workspace != tc.workspace || c.Store.DSN.Value() != tc.dsn {
				t.Errorf("Load(%s) with %q: workspace %q, dsn %q; want %q, %q",
					arg, tc.yaml, c.Tools.Workspace, c.Store.DSN.Value(), tc.workspace, tc.dsn)
			}
		}
	}
}

// TestRequiredKeyNamesTheUnsetVariable: a required value left empty by an
// unset ${VAR} says which variable.
func TestRequiredKeyNamesTheUnsetVariable(t *testing.T) {
	cases := []struct {
		yaml, key, want string
	}{
		{"llm:\n  providers:\n    - {name: p, base_url: '${MY_BASE_URL}'}\n", "llm.providers[0].base_url", "${MY_BASE_URL} is unset"},
		{"gateways:\n  telegram: {enabled: true, token: ${MY_TG_TOKEN}}\n", "gateways.telegram.token", "${MY_TG_TOKEN} is unset"},
		{"gateways:\n  slack: {enabled: true, bot_token: ${SB}, app_token: ${SA}}\n", "gateways.slack.bot_token", "${SB} is unset"},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(tc.yaml), env(map[string]string{"SA": ""}), specs())
		if err == nil || !strings.Contains(err.Error(), tc.key) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v; want an error naming %s and saying %q", tc.yaml, err, tc.key, tc.want)
		}
	}
	// A default, or a set variable, is not blamed.
	_, err := Parse([]byte("llm:\n  providers:\n    - {name: p, base_url: '${U:-}'}\n"), noEnv, specs())
	if err == nil || strings.Contains(err.Error(), "${U") {
		t.Errorf("Parse with ${U:-} = %v; want a plain required error", err)
	}
}
