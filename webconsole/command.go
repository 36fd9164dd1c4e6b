package webconsole

import (
	"context"
	"fmt"
	"strings"

	"github.com/gatehouse-bot/gatehouse/core"
)

// isWeb reports whether word is /web, or /web@botname as platforms send
// in groups.
func isWeb(word string) bool {
	name, _, _ := strings.Cut(word, "@")
	return strings.EqualFold(name, "/web")
}

// Commands lists /web for /help.
func (c *Console) Commands() []core.CommandHelp {
	return []core.CommandHelp{{Name: "web", Args: "[signout]", Summary: "approvers: a one-time sign-in link to the web console, in a direct message; signout ends your sessions"}}
}

// HandleCommand answers /web and /web signout and reports whether s was
// one. Only approvers get a link, and only in a direct conversation: in
// a direct message the gateway opens, or in place when s came in one.
func (c *Console) HandleCommand(ctx context.Context, s core.Signal) bool {
	if s.Kind != core.KindMessage {
		return false
	}
	word, rest, _ := strings.Cut(strings.TrimSpace(s.Text), " ")
	if !isWeb(word) {
		return false
	}
	rest = strings.TrimSpace(rest)
	switch {
	case !c.o.Approvals.MaySignIn(s.From):
		c.o.Log.Warn().Str("from", string(s.From)).Msg("webconsole: /web from an identity that is not an approver refused")
		c.reply(ctx, s.Conv, s.MessageID, fmt.Sprintf("Not authorised (your identity is %s). Only approvers can sign in to the web console.", s.From))
	case strings.EqualFold(rest, "signout"):
		c.signoutAll(ctx, s)
	case rest != "":
		c.reply(ctx, s.Conv, s.MessageID, "Usage: /web for a sign-in link to the web console, /web signout to end your sessions.")
	default:
		c.sendLink(ctx, s)
	}
	return true
}

// sendLink sends a new sign-in link to s.From in a direct conversation.
func (c *Console) sendLink(ctx context.Context, s core.Signal) {
	dm, err := c.o.Chat.DirectConversation(ctx, s.From)
	switch {
	case err == nil:
	case s.Private:
		dm = s.Conv
	default:
		c.reply(ctx, s.Conv, s.MessageID, "I cannot open a direct message with you here, and a sign-in link is never sent to a group: send /web to me in a direct conversation.")
		return
	}
	link, err := c.newLink(ctx, s.From)
	if err != nil {
		c.o.Log.Error().Err(err).Msg("webconsole: sign-in link")
		c.reply(ctx, s.Conv, s.MessageID, "Could not make a sign-in link (storage error). Try again.")
		return
	}
	text := fmt.Sprintf("Your sign-in link to the web console, valid for %d minutes and usable once (do not forward it):\n%s", int(LinkTTL.Minutes()), link)
	if !c.reply(ctx, dm, "", text) {
		return
	}
	if dm.Key() != s.Conv.Key() {
		c.reply(ctx, s.Conv, s.MessageID, "I sent you a sign-in link in a direct message.")
	}
}

// signoutAll ends every session of s.From.
func (c *Console) signoutAll(ctx context.Context, s core.Signal) {
	n, err := c.o.Store.EndWebSessions(ctx, s.From)
	if err != nil {
		c.o.Log.Error().Err(err).Msg("webconsole: end sessions")
		c.reply(ctx, s.Conv, s.MessageID, "Could not end your sessions (storage error). Try again.")
		return
	}
	c.record(ctx, s.From, "signed-out", fmt.Sprintf("/web signout: %d session(s) ended", n))
	c.reply(ctx, s.Conv, s.MessageID, fmt.Sprintf("Signed out of the web console: %d session(s) ended.", n))
}

// reply sends text to conv and reports whether it was delivered.
func (c *Console) reply(ctx context.Context, conv core.Conversation, replyTo, text string) bool {
	if _, err := c.o.Chat.Act(ctx, core.Action{Kind: core.ActionReply, Conv: conv, Text: text, ReplyTo: replyTo, Escaped: true}); err != nil {
		c.o.Log.Error().Err(err).Str("conv", conv.Key()).Msg("webconsole: reply not delivered")
		return false
	}
	return true
}
