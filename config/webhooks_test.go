package config

import (
	"errors"
	"strings"
	"testing"
)

// hook is a valid webhooks list of one entry; tests break one key.
const hook = "webhooks:\n  - {name: alerts, format: alertmanager, secret: t0ken, conversation: \"console:local\", prompt: hi}\n"

func TestWebhookErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		name, src, key, msg string
	}{
		{"no secret", "webhooks: [{name: a, format: json, conversation: \"console:local\", prompt: hi}]\n",
			"webhooks[0].secret", "no unsigned webhook"},
		{"empty secret from env", "webhooks: [{name: a, format: json, secret: \"${UNSET_TOKEN}\", conversation: \"console:local\", prompt: hi}]\n",
			"webhooks[0].secret", ""},
		{"bad format", "webhooks: [{name: a, format: xml, secret: s, conversation: \"console:local\", prompt: hi}]\n",
			"webhooks[0].format", "alertmanager, github, json"},
		{"bad rate", "webhooks: [{name: a, format: json, secret: s, conversation: \"console:local\", prompt: hi, rate: 5/d}]\n",
			"webhooks[0].rate", "N/s, N/m or N/h"},
		{"zero rate", "webhooks: [{name: a, format: json, secret: s, conversation: \"console:local\", prompt: hi, rate: 0/m}]\n",
			"webhooks[0].rate", "N/s"},
		{"bad name", "webhooks: [{name: \"a/b\", format: json, secret: s, conversation: \"console:local\", prompt: hi}]\n",
			"webhooks[0].name", "letters, digits"},
		{"duplicate name", hook + "  - {name: alerts, format: json, secret: s, conversation: \"console:local\", prompt: hi}\n",
			"webhooks[1].name", "also webhooks[0]"},
		{"unknown gateway", "webhooks: [{name: a, format: json, secret: s, conversation: \"irc:x\", prompt: hi}]\n",
			"webhooks[0].conversation", "unknown gateway"},
		{"no prompt", "webhooks: [{name: a, format: json, secret: s, conversation: \"console:local\"}]\n",
			"webhooks[0].prompt", "required"},
		{"no listen", hook + "http: {listen: \"\"}\n", "webhooks[0]", "http.listen"},
		{"unknown key", "webhooks: [{name: a, format: json, secret: s, conversation: \"console:local\", prompt: hi, path: /x}]\n",
			"webhooks[0].path", "unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), noEnv, specs())
			e, ok := errors.AsType[*Error](err)
			if !ok {
				t.Fatalf("Parse = %v; want *Error", err)
			}
			if e.Key != tt.key || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("got Key=%q Msg=%q\nwant Key=%q Msg~%q", e.Key, e.Msg, tt.key, tt.msg)
			}
		})
	}
}

func TestWebhookSecretIsASecret(t *testing.T) {
	c := mustParse(t, hook, noEnv)
	found := false
	for _, s := range c.Secrets() {
		found = found || s == "t0ken"
	}
	if !found {
		t.Fatalf("Secrets() = %q; want the webhook's secret among them", c.Secrets())
	}
}
