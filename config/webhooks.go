package config

import (
	"fmt"

	"github.com/gatehouse-bot/gatehouse/webhooks"
)

// Webhook is one webhook served on http.listen at POST /hooks/<Name>: each
// verified delivery enters Conversation as a message from the identity
// "webhook:<Name>" (see package webhooks).
type Webhook struct {
	// Name is its path and identity (unique; letters, digits, '_', '.', '-').
	Name string `yaml:"name"`
	// Format is alertmanager, github or json.
	Format string `yaml:"format"`
	// Secret is required: alertmanager's bearer, github's HMAC key
	// (X-Hub-Signature-256), either for json.
	Secret Secret `yaml:"secret"`
	// Conversation is where its turns run, "gateway:chat[:thread]"; each
	// incident opens a thread under it where the gateway has threads.
	Conversation string `yaml:"conversation"`
	// Prompt is the text the agent gets; the payload follows it, quoted.
	Prompt string `yaml:"prompt"`
	// Events are the statuses (alertmanager) or event names (github) that
	// start a turn; empty is all; ignored for json.
	Events []string `yaml:"events"`
	// MaxBytes bounds a delivery's body; 0 is 1MiB.
	MaxBytes Size `yaml:"max_bytes"`
	// Rate is the verified deliveries taken, N/s, N/m or N/h; "" is 60/m.
	Rate string `yaml:"rate"`
}

// checkWebhooks checks the webhooks: names unique and usable, a known
// format, a secret, a conversation on a known gateway, a prompt, a rate,
// and http.listen on to serve them.
func checkWebhooks(ch *checker, list []Webhook, listen string) {
	names := map[string]int{}
	for i, w := range list {
		key := fmt.Sprintf("webhooks[%d]", i)
		if ch.required(key+".name", w.Name) {
			if err := webhooks.CheckName(w.Name); err != nil {
				ch.fail(key+".name", "%v", err)
			} else if first, dup := names[w.Name]; dup {
				ch.fail(key+".name", "duplicate webhook name %s (also webhooks[%d]); set distinct names", quote(w.Name), first)
			}
			names[w.Name] = i
		}
		if ch.required(key+".format", w.Format) {
			if err := webhooks.CheckFormat(w.Format); err != nil {
				ch.fail(key+".format", "%v", err)
			}
		}
		if w.Secret.Value() == "" {
			ch.fail(key+".secret", "is required: no unsigned webhook is accepted; set a long random token from the environment, e.g. ${ALERTS_TOKEN}")
		}
		if ch.required(key+".conversation", w.Conversation) {
			ch.conversation(key+".conversation", w.Conversation)
		}
		ch.required(key+".prompt", w.Prompt)
		if w.MaxBytes < 0 {
			ch.fail(key+".max_bytes", "must not be negative, got %s", w.MaxBytes)
		}
		if _, err := webhooks.ParseRate(w.Rate); err != nil {
			ch.fail(key+".rate", "%v", err)
		}
		if listen == "" {
			ch.fail(key, "webhooks are served on http.listen, which is empty; set http.listen")
		}
	}
}
