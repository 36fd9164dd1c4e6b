package telegram

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gatehouse-bot/gatehouse/core"
)

var _ core.DirectMessenger = (*Gateway)(nil)

// DirectConversation returns the private chat with id, a Telegram user:
// its id is the user's (no call: a user who never started the bot
// cannot be written to, and the send says so).
func (g *Gateway) DirectConversation(_ context.Context, id core.Identity) (core.Conversation, error) {
	user, ok := strings.CutPrefix(string(id), Name+":")
	n, err := strconv.ParseInt(user, 10, 64)
	if !ok || err != nil || n <= 0 {
		return core.Conversation{}, fmt.Errorf("telegram: direct message: %q is no Telegram user", id)
	}
	return core.Conversation{Gateway: Name, Chat: strconv.FormatInt(n, 10)}, nil
}
