package slack

import (
	"context"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// The slash commands the gateway hands to the engine: the approval
// broker's, and pairing's (Slack sends no message starting with "/" as
// text, so an approver in Slack pairs through a slash command).
var slashVerbs = map[string]bool{"/approve": true, "/deny": true, "/pending": true,
	"/pair": true, "/pairs": true, "/unpair": true}

// onInteraction resolves the approval buttons of a block_actions payload
// in the background. The presser's identity comes from the payload's user,
// never from the button: its value only names the approval.
func (g *Gateway) onInteraction(rs *runState, cb slack.InteractionCallback) {
	if rs == nil {
		return
	}
	if cb.Type != slack.InteractionTypeBlockActions {
		g.log.Debug().Str("type", textutil.Visible(string(cb.Type))).Msg("ignoring an interaction of another kind")
		return
	}
	channel := cb.Channel.ID
	if channel == "" {
		channel = cb.Container.ChannelID
	}
	thread := cb.Message.ThreadTimestamp
	if thread == "" {
		thread = cb.Container.ThreadTs
	}
	if cb.User.ID == "" || channel == "" {
		g.log.Warn().Msg("skipping a button press without user or channel")
		return
	}
	for _, act := range cb.ActionCallback.BlockActions {
		if act == nil {
			continue
		}
		d, ok := decision(act.ActionID)
		if !ok {
			g.log.Debug().Str("action_id", textutil.Visible(act.ActionID)).Msg("ignoring a button of another kind")
			continue
		}
		call := slashCall{channel: channel, thread: thread, user: cb.User.ID}
		token := act.Value
		g.goBackground(func() { g.press(rs.ctx, call, token, d) })
	}
}

// press resolves one button press through the broker and tells the
// presser the outcome, visible to them only.
func (g *Gateway) press(ctx context.Context, call slashCall, token string, d core.ApprovalDecision) {
	conv := core.Conversation{Gateway: Name, Chat: call.channel, Thread: call.thread}
	if strings.HasPrefix(call.channel, "D") {
		conv.Thread = ""
	}
	from := identity(call.user)
	var out string
	if g.approvals == nil {
		out = "approvals are not available"
	} else {
		out = g.approvals.Press(ctx, from, conv, token, d, nil)
	}
	g.log.Info().Str("from", string(from)).Str("conv", conv.Key()).Str("outcome", out).Msg("approval button pressed")
	text := upperFirst(out) + "."
	if out == "not authorised" {
		text = "Not authorised: only the configured approvers can resolve this request (your identity is " + string(from) + "). Nothing ran."
	}
	if _, err := g.out.ReplyPrivate(ctx, conv, text, func(ctx context.Context, c gateways.Chunk) (string, error) {
		return "", g.ephemeral(ctx, call, escapeMrkdwn(c.Text))
	}); err != nil && ctx.Err() == nil {
		g.log.Warn().Str("conv", conv.Key()).Err(err).Msg("cannot tell the presser the outcome")
	}
}

// onSlash hands /approve, /deny, /pending, /pair, /pairs and /unpair to the engine as a message
// from the invoking user in the channel's conversation; the broker's
// answer comes back with the command's message id and goes to that user
// only. Other commands are answered with a short note.
func (g *Gateway) onSlash(rs *runState, cmd slack.SlashCommand) {
	if rs == nil {
		return
	}
	if cmd.UserID == "" || cmd.ChannelID == "" {
		g.log.Warn().Msg("skipping a slash command without user or channel")
		return
	}
	call := slashCall{channel: cmd.ChannelID, user: cmd.UserID, responseURL: cmd.ResponseURL, at: time.Now()}
	conv := core.Conversation{Gateway: Name, Chat: cmd.ChannelID}
	command := strings.ToLower(cmd.Command)
	if !slashVerbs[command] {
		g.log.Info().Str("command", textutil.Visible(cmd.Command)).Msg("unknown slash command")
		g.goBackground(func() {
			_ = g.answerSlash(rs.ctx, conv, call, "I only know /approve <token> [always | for 30m], /deny <token> [reason], /pending, /pair <code>, /pairs and /unpair <identity>.")
		})
		return
	}
	id := g.slashes.add(call)
	g.enqueue(rs, core.Signal{
		Kind:      core.KindMessage,
		Conv:      conv,
		From:      identity(cmd.UserID),
		Text:      strings.TrimSpace(command + " " + cmd.Text),
		MessageID: id,
		Private:   strings.HasPrefix(cmd.ChannelID, "D"),
		At:        call.at,
	})
}

// upperFirst capitalises s's first letter.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
