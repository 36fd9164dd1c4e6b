package config

import (
	"errors"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		env  map[string]string
		key  string // Error.Key
		line int    // Error.Line
		msg  string // contained in Error.Msg
	}{
		// syntax and structure
		{"syntax", "llm:\n  timeout: [\n", nil, "", 2, "YAML: did not find expected node content"},
		{"top level not a mapping", "- a\n", nil, "", 1, "want a mapping, got a list"},
		{"unknown top-level key", "llm: {}\nmodels: {}\n", nil, "models", 2, "unknown key"},
		{"unknown nested key", "gateways:\n  telegram:\n    foo: 1\n", nil, "gateways.telegram.foo", 3, "unknown key"},
		{"unknown key in list item", "llm:\n  providers:\n    - base_url: http://h\n      modle: x\n", nil, "llm.providers[0].modle", 4, "unknown key"},
		{"unknown key near a known one", "llm:\n  max_step: 5\n", nil, "llm.max_step", 2, "unknown key; did you mean max_steps?"},
		{"unknown gateway near a known one", "gateways:\n  slakc: {}\n", nil, "gateways.slakc", 2, "unknown key; did you mean slack?"},
		{"duplicate key", "log:\n  level: info\n  level: debug\n", nil, "log.level", 3, "duplicate key (first at line 2)"},
		{"non-scalar key", "log:\n  [a]: b\n", nil, "log", 2, "want a plain key"},
		// types
		{"mapping wanted", "llm: 5\n", nil, "llm", 1, "want a mapping, got a scalar"},
		{"list wanted", "hitl: {approvers: console:local}\n", nil, "hitl.approvers", 1, "want a list, got a scalar"},
		{"string wanted", "tools: {workspace: [a]}\n", nil, "tools.workspace", 1, "want a string, got a list"},
		{"int wanted", "engine:\n  queue: lots\n", nil, "engine.queue", 2, `want an integer, got "lots"`},
		{"int not float", "engine: {queue: 1.5}\n", nil, "engine.queue", 1, `want an integer, got "1.5"`},
		{"bool wanted", "tools: {http: {allow_private: yes}}\n", nil, "tools.http.allow_private", 1, `want true or false, got "yes"`},
		{"bad duration", "llm:\n  timeout: 5x\n", nil, "llm.timeout", 2, `bad duration "5x"`},
		{"duration without unit", "hitl: {ttl: 900}\n", nil, "hitl.ttl", 1, `bad duration "900"`},
		{"duration without unit says so", "hitl: {ttl: 15}\n", nil, "hitl.ttl", 1, `bad duration "15": a duration needs a unit, e.g. 15m`},
		{"bad duration in map", "tools:\n  timeouts:\n    shell: soon\n", nil, "tools.timeouts.shell", 3, `bad duration "soon"`},
		{"enabled not bool", "gateways: {console: {enabled: maybe}}\n", nil, "gateways.console.enabled", 1, "want true or false"},
		// env expansion
		{"bad env reference", "log: {level: '${1X}'}\n", nil, "log.level", 1, "bad variable reference ${1X}"},
		{"unterminated env reference", "log:\n  level: \"${LEVEL\"\n", nil, "log.level", 2, "unterminated ${"},
		{"expanded value validated", "log: {level: '${LEVEL}'}\n", map[string]string{"LEVEL": "loud"}, "log.level", 1, `got "loud"`},
		// ranges and enums
		{"max_steps too high", "llm: {max_steps: 101}\n", nil, "llm.max_steps", 1, "101 out of range 1..100"},
		{"max_steps zero", "llm:\n  max_steps: 0\n", nil, "llm.max_steps", 2, "out of range"},
		{"max_tool_calls zero", "llm: {max_tool_calls: 0}\n", nil, "llm.max_tool_calls", 1, "0 out of range 1..256"},
		{"max_message too big", "engine: {max_message: 2000000}\n", nil, "engine.max_message", 1, "out of range 1..1048576"},
		{"negative timeout", "llm: {timeout: -1s}\n", nil, "llm.timeout", 1, "must be positive"},
		{"history", "llm: {history: 0}\n", nil, "llm.history", 1, "out of range"},
		{"concurrency", "engine: {concurrency: 0}\n", nil, "engine.concurrency", 1, "out of range"},
		{"ttl zero", "hitl: {ttl: 0s}\n", nil, "hitl.ttl", 1, "must be positive"},
		{"log level", "log: {level: verbose}\n", nil, "log.level", 1, `want "debug", "info", "warn" or "error", got "verbose"`},
		{"log format", "log: {format: xml}\n", nil, "log.format", 1, "want"},
		{"store driver", "store: {driver: mysql}\n", nil, "store.driver", 1, `got "mysql"`},
		{"store dsn empty", "store: {dsn: ''}\n", nil, "store.dsn", 1, "required"},
		{"retention negative", "store: {retention: -1h}\n", nil, "store.retention", 1, "negative"},
		{"lease_ttl zero", "store: {lease_ttl: 0s}\n", nil, "store.lease_ttl", 1, "positive"},
		{"instance with a space", "store: {instance: 'a b'}\n", nil, "store.instance", 1, "printable"},
		{"instance too long", "store: {instance: '" + strings.Repeat("i", 65) + "'}\n", nil, "store.instance", 1, "at most 64"},
		{"max_output", "tools: {max_output: 0}\n", nil, "tools.max_output", 1, "out of range"},
		{"max_bytes", "tools: {http: {max_bytes: -1}}\n", nil, "tools.http.max_bytes", 1, "out of range"},
		{"tool timeout zero", "tools: {timeouts: {shell: 0s}}\n", nil, "tools.timeouts.shell", 1, "must be positive"},
		{"workspace empty", "tools: {workspace: ''}\n", nil, "tools.workspace", 1, "required"},
		{"sandbox", "tools: {sandbox: strict}\n", nil, "tools.sandbox", 1, `got "strict"`},
		{"http listen", "http: {listen: localhost}\n", nil, "http.listen", 1, "want host:port"},
		{"http port", "http: {listen: '127.0.0.1:99999'}\n", nil, "http.listen", 1, "bad port"},
		// providers
		{"provider without base_url", "llm:\n  providers:\n    - name: a\n", nil, "llm.providers[0].base_url", 3, "required"},
		{"provider base_url scheme", "llm: {providers: [{base_url: 'ftp://h/v1'}]}\n", nil, "llm.providers[0].base_url", 1, `scheme "ftp"`},
		{"provider base_url relative", "llm: {providers: [{base_url: '/v1'}]}\n", nil, "llm.providers[0].base_url", 1, "want a"},
		{"provider base_url no host", "llm: {providers: [{base_url: 'http://'}]}\n", nil, "llm.providers[0].base_url", 1, "no host"},
		{"provider names unique", "llm:\n  providers:\n    - {base_url: 'http://a/v1'}\n    - {base_url: 'http://a/v2'}\n", nil, "llm.providers[1].name", 4, `duplicate provider name "a" (also llm.providers[0])`},
		{"provider timeout", "llm: {providers: [{base_url: 'http://a', timeout: -5s}]}\n", nil, "llm.providers[0].timeout", 1, "must be positive"},
		// hitl identities and conversations
		{"approvers empty", "hitl:\n  approvers: []\n", nil, "hitl.approvers", 2, "at least one approver"},
		{"approver without gateway", "hitl:\n  approvers: [console:local, alice]\n", nil, "hitl.approvers[1]", 2, `want an identity gateway:id`},
		{"approver unknown gateway", "hitl: {approvers: ['telgram:1']}\n", nil, "hitl.approvers[0]", 1, `unknown gateway "telgram"`},
		{"approver empty id", "hitl: {approvers: ['slack:']}\n", nil, "hitl.approvers[0]", 1, "want an identity"},
		{"notify bad key", "hitl: {notify: ['telegram']}\n", nil, "hitl.notify[0]", 1, "want a conversation"},
		{"notify unknown gateway", "hitl: {notify: ['irc:#x']}\n", nil, "hitl.notify[0]", 1, `unknown gateway "irc"`},
		// policy
		{"rule without tool", "policy:\n  rules:\n    - {decision: allow}\n", nil, "policy.rules[0].tool", 3, "required"},
		{"rule bad glob", "policy: {rules: [{tool: '[', decision: allow}]}\n", nil, "policy.rules[0].tool", 1, `bad glob "["`},
		{"rule bad regexp", "policy: {rules: [{tool: shell, args: '(', decision: deny}]}\n", nil, "policy.rules[0].args", 1, "bad regexp"},
		{"rule without decision", "policy: {rules: [{tool: shell}]}\n", nil, "policy.rules[0].decision", 1, "required"},
		{"rule bad decision", "policy:\n  rules:\n    - {tool: a, decision: allow}\n    - {tool: b, decision: maybe}\n", nil, "policy.rules[1].decision", 4, `got "maybe"`},
		// gateways
		{"telegram enabled without token", "gateways:\n  telegram: {enabled: true}\n", nil, "gateways.telegram.token", 2, "required when gateways.telegram.enabled is true"},
		{"discord enabled without token", "gateways: {discord: {enabled: true, token: '${DISCORD_BOT_TOKEN}'}}\n", nil, "gateways.discord.token", 1, "required when"},
		{"slack only bot token", "gateways:\n  slack:\n    bot_token: xoxb-1\n", nil, "gateways.slack.app_token", 2, "required when gateways.slack.bot_token is set"},
		{"slack only app token", "gateways: {slack: {app_token: xapp-1}}\n", nil, "gateways.slack.bot_token", 1, "required when gateways.slack.app_token is set"},
		{"slack enabled without tokens", "gateways: {slack: {enabled: true}}\n", nil, "gateways.slack.bot_token", 1, "required when gateways.slack.enabled is true"},
		{"telegram api_url", "gateways: {telegram: {api_url: 'telegram.org'}}\n", nil, "gateways.telegram.api_url", 1, "want a"},
		{"telegram mode", "gateways: {telegram: {mode: push}}\n", nil, "gateways.telegram.mode", 1, `want "polling" or "webhook"`},
		{"telegram group", "gateways: {telegram: {group: some}}\n", nil, "gateways.telegram.group", 1, `want "mention" or "all"`},
		{"webhook without public_url", "gateways:\n  telegram:\n    mode: webhook\n    webhook: {secret_token: abc}\n", nil, "gateways.telegram.webhook.public_url", 4, "required"},
		{"webhook without secret", "gateways:\n  telegram:\n    mode: webhook\n    webhook: {public_url: 'https://bot.example.com/tg'}\n", nil, "gateways.telegram.webhook.secret_token", 4, "required in webhook mode"},
		{"webhook bad secret", "gateways: {telegram: {webhook: {secret_token: 'a b'}}}\n", nil, "gateways.telegram.webhook.secret_token", 1, "want 1-256 characters"},
		{"webhook listen needed", "http: {listen: ''}\ngateways: {telegram: {mode: webhook, webhook: {public_url: 'https://x/y', secret_token: s}}}\n", nil, "gateways.telegram.webhook.listen", 2, "required when http.listen is empty"},
		{"webhook bad listen", "gateways: {telegram: {webhook: {listen: ':x'}}}\n", nil, "gateways.telegram.webhook.listen", 1, "bad port"},
		{"discord gateway_url scheme", "gateways: {discord: {gateway_url: 'https://gw'}}\n", nil, "gateways.discord.gateway_url", 1, `want a "ws" or "wss" URL`},
		{"allow entry with space", "gateways:\n  discord:\n    allow: ['1', 'a b']\n", nil, "gateways.discord.allow[1]", 3, "without spaces"},
		{"allow entry empty", "gateways: {slack: {allow: ['']}}\n", nil, "gateways.slack.allow[0]", 1, "without spaces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.src), env(tt.env), specs())
			e, ok := errors.AsType[*Error](err)
			if !ok {
				t.Fatalf("Parse = %+v, %v; want *Error", c, err)
			}
			if e.Key != tt.key || e.Line != tt.line || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("got Key=%q Line=%d Msg=%q\nwant Key=%q Line=%d Msg~%q", e.Key, e.Line, e.Msg, tt.key, tt.line, tt.msg)
			}
			if c != nil {
				t.Error("a config returned with an error")
			}
			wantPrefix := "config: "
			if tt.key != "" {
				wantPrefix += tt.key + ": "
			}
			if !strings.HasPrefix(err.Error(), wantPrefix) {
				t.Errorf("Error() = %q, want prefix %q", err, wantPrefix)
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{Key: "llm.providers[0].base_url", Msg: "required"}, "config: llm.providers[0].base_url: required"},
		{Error{Key: "llm.timeout", Line: 7, Msg: `bad duration "5x"`}, `config: llm.timeout: bad duration "5x" (line 7)`},
		{Error{File: "c.yaml", Key: "log", Line: 2, Msg: "m"}, "config: log: m (c.yaml:2)"},
		{Error{File: "c.yaml", Msg: "cannot read: denied"}, "config: cannot read: denied (c.yaml)"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// TestErrorsNeverRepeatSecrets puts secret-looking values where they do not
// belong and checks the error does not echo them.
func TestErrorsNeverRepeatSecrets(t *testing.T) {
	const key = "sk-abcdefghijklmnopqrstuvwxyz0123456789"
	for _, src := range []string{
		"llm: {timeout: '${OPENAI_API_KEY}'}\n",
		"llm: {max_steps: '${OPENAI_API_KEY}'}\n",
		"log: {level: '${OPENAI_API_KEY}'}\n",
		"gateways: {telegram: '${OPENAI_API_KEY}'}\n",
		"llm: {providers: [{base_url: 'https://user:${OPENAI_API_KEY}@h:x/v1'}]}\n",
		"llm: {providers: [{base_url: 'ftp://user:${OPENAI_API_KEY}@h/v1'}]}\n",
	} {
		_, err := Parse([]byte(src), env(map[string]string{"OPENAI_API_KEY": key}), specs())
		if err == nil || strings.Contains(err.Error(), key) || strings.Contains(err.Error(), key[:20]) {
			t.Errorf("Parse(%q) = %v", src, err)
		}
	}
}
