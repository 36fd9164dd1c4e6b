package core

import "context"

// WebhookGateway is the gateway part of a webhook's identity. No gateway
// of the table has this name, so no platform user's identity has it.
const WebhookGateway = "webhook"

// WebhookIdentity is the identity a webhook's deliveries come from,
// "webhook:<name>".
func WebhookIdentity(name string) Identity { return Identity(WebhookGateway + ":" + name) }

// IsWebhook reports whether id is a webhook's identity. Such an identity
// is never an approver, wherever it is listed.
func (id Identity) IsWebhook() bool {
	return id.Gateway() == WebhookGateway && len(id) > len(WebhookGateway)+1
}

// fromWebhook reports whether s is a delivery of a configured webhook: a
// message the webhooks server made, from that webhook's identity. Its
// verified signature is its admission, so allow lists do not apply to it.
func fromWebhook(s Signal) bool {
	return s.Webhook != "" && s.From == WebhookIdentity(s.Webhook)
}

// ThreadStarter is an optional ability of a gateway actuator: post text
// as a new message in conv (a chat, without a thread) and return where
// the replies to an incident's deliveries go: the conversation of the
// thread under it (a thread under the message, a thread that is a
// channel of its own, a forum topic), or, in a chat without threads, conv
// itself and replyTo, the id of that message, which the incident's later
// messages reply to (a reply chain).
type ThreadStarter interface {
	StartThread(ctx context.Context, conv Conversation, text string) (thread Conversation, replyTo string, err error)
}
