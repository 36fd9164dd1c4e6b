package discord

import (
	"context"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// onInteraction starts handling an interaction in the background: the
// reading goroutine is not held, and the acknowledgement goes out at once.
func (g *Gateway) onInteraction(in *discordgo.Interaction) {
	rs := g.run.Load()
	if rs == nil {
		return
	}
	switch in.Type {
	case discordgo.InteractionMessageComponent:
		g.goBackground(func() { g.onPress(rs.ctx, in) })
	case discordgo.InteractionApplicationCommand:
		g.goBackground(func() { g.onSlash(rs.ctx, rs.inbox, in) })
	default:
		g.log.Debug().Stringer("type", in.Type).Msg("ignoring an interaction of another kind")
	}
}

// onPress handles a button press: it acknowledges it first (a deferred
// update, well within Discord's 3 seconds), then resolves it through the
// broker as the pressing user, and tells that user the outcome in an
// ephemeral follow-up ("not authorised", "already resolved by …"). The
// request message itself is edited by UpdateApproval once resolved. A
// press that cannot be acknowledged (Discord does not know it, or it was
// answered already) resolves nothing: Discord shows its presser it failed.
func (g *Gateway) onPress(ctx context.Context, in *discordgo.Interaction) {
	if !g.ack(ctx, in, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}) {
		return
	}
	g.followup(ctx, in, g.press(ctx, in))
}

// press turns a button press into an Approvals.Press and returns the
// outcome for the presser. The identity comes from the interaction's
// member (guilds) or user (DMs), never from the custom_id.
func (g *Gateway) press(ctx context.Context, in *discordgo.Interaction) string {
	data, ok := in.Data.(discordgo.MessageComponentInteractionData)
	u := invoker(in)
	switch {
	case u == nil || u.Bot:
		return "This button cannot be used here."
	case !ok:
		return "Unknown button."
	case g.approvals == nil:
		return "Approvals are not available."
	}
	d, token, ok := parseCustomID(data.CustomID)
	if !ok {
		return "Unknown button."
	}
	conv, _ := g.convOf(ctx, in.ChannelID, in.GuildID == "")
	from := identity(u.ID)
	out := g.approvals.Press(ctx, from, conv, token, d, nil)
	g.log.Info().Str("from", string(from)).Str("conv", conv.Key()).Str("outcome", out).Msg("approval button pressed")
	return out
}

// invoker is the user behind an interaction: member.user in guilds, user
// in DMs.
func invoker(in *discordgo.Interaction) *discordgo.User {
	if in.Member != nil && in.Member.User != nil {
		return in.Member.User
	}
	return in.User
}

// ack answers an interaction's callback once and reports whether Discord
// took it. It is one attempt: an interaction cannot wait for retries past
// its 3 seconds.
func (g *Gateway) ack(ctx context.Context, in *discordgo.Interaction, r *discordgo.InteractionResponse) bool {
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	err := g.s.InteractionRespond(in, r, discordgo.WithContext(rctx))
	if err != nil && ctx.Err() == nil {
		g.log.Warn().Str("interaction", textutil.Visible(in.ID)).Err(g.scrub(err)).Msg("cannot acknowledge an interaction; not handling it")
	}
	return err == nil
}

// followup sends text to the interaction's user only (ephemeral), best
// effort, like a toast.
func (g *Gateway) followup(ctx context.Context, in *discordgo.Interaction, text string) {
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	p := &discordgo.WebhookParams{Content: text, Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: mentions()}
	if _, err := g.s.FollowupMessageCreate(in, false, p, discordgo.WithContext(rctx)); err != nil && ctx.Err() == nil {
		g.log.Warn().Str("interaction", in.ID).Err(g.scrub(err)).Msg("cannot send an interaction follow-up")
	}
}
