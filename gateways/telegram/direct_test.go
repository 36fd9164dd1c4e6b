package telegram

import (
	"context"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
)

// TestDirectConversation: a Telegram user's private chat has their id; an
// identity that is no Telegram user id is refused.
func TestDirectConversation(t *testing.T) {
	var g Gateway
	c, err := g.DirectConversation(context.Background(), "telegram:777")
	if err != nil || c != (core.Conversation{Gateway: Name, Chat: "777"}) {
		t.Errorf("DirectConversation(telegram:777) = %+v, %v; want telegram:777", c, err)
	}
	for _, id := range []core.Identity{"slack:U1", "telegram:", "telegram:-100123", "telegram:x"} {
		if _, err := g.DirectConversation(context.Background(), id); err == nil {
			t.Errorf("DirectConversation(%q) succeeded; want an error", id)
		}
	}
}
