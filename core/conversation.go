package core

import (
	"fmt"
	"strings"
)

// Identity names one person on one gateway, "gateway:id", for example
// "slack:U0123ABCD" or "discord:80351110224678912".
type Identity string

// Gateway returns the gateway part of the identity ("slack").
func (id Identity) Gateway() string {
	g, _, _ := strings.Cut(string(id), ":")
	return g
}

// Conversation says where a signal came from and where replies go.
type Conversation struct {
	Gateway string // the gateway's name, e.g. "slack"
	Chat    string // platform chat or channel id
	Thread  string // optional thread or topic id
}

// Key is the conversation's stable string form, "gateway:chat[:thread]",
// e.g. "slack:C0123ABCD:1700000000.000100". It is the key for history, queues and logs.
func (c Conversation) Key() string {
	if c.Thread == "" {
		return c.Gateway + ":" + c.Chat
	}
	return c.Gateway + ":" + c.Chat + ":" + c.Thread
}

// String returns Key.
func (c Conversation) String() string { return c.Key() }

// ParseConversation reverses Key. The chat part may not contain ':' unless a
// thread follows; a key with more parts keeps the rest in Thread.
func ParseConversation(key string) (Conversation, error) {
	g, rest, ok := strings.Cut(key, ":")
	if !ok || g == "" || rest == "" {
		return Conversation{}, fmt.Errorf("conversation %q: want gateway:chat[:thread]", key)
	}
	chat, thread, _ := strings.Cut(rest, ":")
	if chat == "" {
		return Conversation{}, fmt.Errorf("conversation %q: empty chat", key)
	}
	return Conversation{Gateway: g, Chat: chat, Thread: thread}, nil
}
