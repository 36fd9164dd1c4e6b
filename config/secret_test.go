package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"gopkg.in/yaml.v3"
)

// secretValues are distinct, recognisable values for every secret key.
var secretValues = map[string]string{
	"OPENAI_API_KEY": "openai-key-AAAA1111", "BACKUP_KEY": "backup-key-BBBB2222",
	"TG_TOKEN": "telegram-token-CCCC3333", "TG_SECRET": "webhookSecretDDDD4444",
	"DISCORD_TOKEN": "discord-token-EEEE5555", "SLACK_BOT": "xoxb-slack-FFFF6666",
	"SLACK_APP": "xapp-slack-GGGG7777", "PG_PASSWORD": "pgpassHHHH8888",
	"MCP_ENV": "mcp-env-IIII9999", "MCP_HDR": "Bearer mcp-hdr-JJJJ0000",
}

const allSecretsConfig = `
llm:
  providers:
    - {name: a, base_url: "https://api.openai.com/v1", api_key: "${OPENAI_API_KEY}"}
    - {name: b, base_url: "http://127.0.0.1:1/v1", api_key: "${BACKUP_KEY}"}
gateways:
  telegram: {token: "${TG_TOKEN}", webhook: {secret_token: "${TG_SECRET}"}}
  discord: {token: "${DISCORD_TOKEN}"}
  slack: {bot_token: "${SLACK_BOT}", app_token: "${SLACK_APP}"}
store: {driver: postgres, dsn: "postgres://bot:${PG_PASSWORD}@db:5432/gatehouse"}
mcp:
  servers:
    - {name: gh, command: github-mcp, env: {GITHUB_TOKEN: "${MCP_ENV}"}}
    - {name: web, url: "https://mcp.example/mcp", headers: {Authorization: "${MCP_HDR}"}}
`

// jsonMask is secretMask as encoding/json writes it, escaping < and >.
const jsonMask = `\u003csecret\u003e`

func hasMask(s string) bool {
	return strings.Contains(s, secretMask) || strings.Contains(s, jsonMask)
}

func secretConfig(t *testing.T) *Config {
	t.Helper()
	return mustParse(t, allSecretsConfig, env(secretValues))
}

// TestHideConfigSecrets renders the whole config every way it could be
// printed and checks that no secret shows (after alertmanager's test).
func TestHideConfigSecrets(t *testing.T) {
	c := secretConfig(t)
	y, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	renderings := map[string]string{
		"yaml": string(y), "json": string(j),
		"%v": fmt.Sprintf("%v", c), "%+v": fmt.Sprintf("%+v", c), "%#v": fmt.Sprintf("%#v", *c),
		"%q": fmt.Sprintf("%q", c.LLM.Providers[0].APIKey),
	}
	for name, out := range renderings {
		for k, v := range secretValues {
			if strings.Contains(out, v) {
				t.Errorf("%s rendering shows %s:\n%s", name, k, out)
			}
		}
		if !hasMask(out) {
			t.Errorf("%s rendering has no %s:\n%s", name, secretMask, out)
		}
	}
}

func TestSecretsLists(t *testing.T) {
	got := secretConfig(t).Secrets()
	for k, v := range secretValues {
		if !slices.Contains(got, v) {
			t.Errorf("Secrets() misses %s", k)
		}
	}
	// and MCP_HDR's token without its "Bearer " scheme
	if len(got) != len(secretValues)+1 {
		t.Errorf("Secrets() = %d values, want %d", len(got), len(secretValues)+1)
	}
}

func TestDSNPassword(t *testing.T) {
	for dsn, want := range map[string]string{
		"gatehouse.db": "",
		"file:gatehouse.db?_pragma=busy_timeout(5000)": "",
		"postgres://u:pw1@h/db":                        "pw1",
		"postgres://u@h/db":                            "",
		"host=h user=u password=pw2 dbname=d":          "pw2",
		"host=h password='pw3'":                        "pw3",
	} {
		if got := dsnPassword(dsn); got != want {
			t.Errorf("dsnPassword(%q) = %q, want %q", dsn, got, want)
		}
	}
}

func TestSecretForms(t *testing.T) {
	s := Secret("hunter2-hunter2")
	j, _ := json.Marshal(s)
	txt, _ := s.MarshalText()
	y, _ := yaml.Marshal(map[string]Secret{"k": s})
	for name, got := range map[string]string{
		"String": s.String(), "GoString": s.GoString(), "%v": fmt.Sprint(s), "%#v": fmt.Sprintf("%#v", s),
		"json": string(j), "text": string(txt), "yaml": string(y),
	} {
		if strings.Contains(got, "hunter2") || !hasMask(got) {
			t.Errorf("%s = %q", name, got)
		}
	}
	if s.Value() != "hunter2-hunter2" {
		t.Errorf("Value() = %q", s.Value())
	}
	var empty Secret
	if empty.String() != "" || fmt.Sprint(empty) != "" {
		t.Errorf("empty secret prints %q", empty.String())
	}
}

func TestSecretInZerolog(t *testing.T) {
	var buf bytes.Buffer
	log := zerolog.New(&buf)
	s := Secret("hunter2-hunter2")
	p := Provider{Name: "p", APIKey: s}
	log.Info().Interface("i", s).Any("a", s).Any("p", p).Interface("c", secretConfig(t)).Stringer("s", s).Msg("m")
	log.Info().Fields(map[string]any{"f": s}).Fields([]any{"g", s}).Msg("m")
	out := buf.String()
	if strings.Contains(out, "hunter2") || strings.Count(out, jsonMask)+strings.Count(out, secretMask) < 6 {
		t.Errorf("zerolog output: %s", out)
	}
	for k, v := range secretValues {
		if strings.Contains(out, v) {
			t.Errorf("zerolog output shows %s", k)
		}
	}
}

func TestDurationForms(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{15 * time.Minute, "15m"}, {2160 * time.Hour, "2160h"}, {90 * time.Second, "1m30s"},
		{time.Hour + time.Second, "1h0m1s"}, {0, "0s"}, {1500 * time.Millisecond, "1.5s"},
	}
	for _, tt := range tests {
		d := Duration(tt.d)
		if d.String() != tt.want {
			t.Errorf("Duration(%v).String() = %q, want %q", tt.d, d.String(), tt.want)
		}
		var back Duration
		if err := back.UnmarshalText([]byte(d.String())); err != nil || back != d {
			t.Errorf("UnmarshalText(%q) = %v, %v", d.String(), back, err)
		}
	}
	var v struct {
		D Duration `yaml:"d"`
	}
	if err := yaml.Unmarshal([]byte("d: 2m"), &v); err != nil || v.D.D() != 2*time.Minute {
		t.Errorf("yaml.Unmarshal = %v, %v", v.D, err)
	}
	if err := yaml.Unmarshal([]byte("d: [1]"), &v); err == nil {
		t.Error("yaml.Unmarshal of a list into Duration: want an error")
	}
	if err := yaml.Unmarshal([]byte("d: 5x"), &v); err == nil {
		t.Error("yaml.Unmarshal of 5x: want an error")
	}
}

func TestURLCredential(t *testing.T) {
	tests := []struct {
		url, cred, shown string
	}{
		{"https://api.openai.com/v1", "", "https://api.openai.com/v1"},
		{"https://bot:pw-Secret9@proxy.example.com/v1", "pw-Secret9", "https://bot:xxxxx@proxy.example.com/v1"},
		{"https://tok-Secret9@proxy.example.com/v1", "tok-Secret9", "https://xxxxx@proxy.example.com/v1"},
		{"http://bot:@10.0.0.2:8080/v1", "", "http://bot:xxxxx@10.0.0.2:8080/v1"},
		{"http://h:x/v1", "", "(unparsable URL)"},
	}
	for _, tt := range tests {
		if got := URLCredential(tt.url); got != tt.cred {
			t.Errorf("URLCredential(%q) = %q, want %q", tt.url, got, tt.cred)
		}
		if got := RedactURL(tt.url); got != tt.shown {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.url, got, tt.shown)
		}
	}
}

// TestSecretsListURLCredentials: a password (or a lone token) inside any
// configured URL is a secret, so logs, tool output and replies are
// scrubbed of it.
func TestSecretsListURLCredentials(t *testing.T) {
	c := mustParse(t, `
llm:
  providers:
    - {name: proxy, base_url: "https://bot:${PROXY_PW}@proxy.example.com/v1"}
    - {name: token, base_url: "https://${PROXY_TOKEN}@other.example.com/v1"}
gateways:
  telegram: {api_url: "https://tg:${TG_PW}@tg.example.com"}
`, env(map[string]string{"PROXY_PW": "proxyPass-1234", "PROXY_TOKEN": "proxyToken-5678", "TG_PW": "tgPass-9012"}))
	got := c.Secrets()
	for _, want := range []string{"proxyPass-1234", "proxyToken-5678", "tgPass-9012"} {
		if !slices.Contains(got, want) {
			t.Errorf("Secrets() = %q; misses %q", got, want)
		}
	}
	if slices.Contains(got, "bot") || slices.Contains(got, "tg") {
		t.Errorf("Secrets() = %q; a user name next to a password is not a secret", got)
	}
}
