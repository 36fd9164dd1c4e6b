package discord

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// maxCustomID is the longest custom_id Discord accepts, in characters.
const maxCustomID = 100

// The custom_id prefixes of the approval buttons: "gh:a:TOKEN" etc. A
// custom_id only names the approval; the broker decides who may resolve it.
const (
	idApprove       = "gh:a:"
	idDeny          = "gh:d:"
	idApproveAlways = "gh:A:"
	idApproveGrant  = "gh:g:" // approve, and grant identical calls for core.ButtonGrant
)

// PromptApproval sends the approval request text, followed by the typed-
// command hint, to conv with Approve, Deny and (where allowed) Approve
// always buttons on its last message, and remembers that message so
// UpdateApproval can edit it.
func (g *Gateway) PromptApproval(ctx context.Context, conv core.Conversation, text string, p core.ApprovalPrompt) error {
	if err := checkChannel(conv); err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" {
		text = "Approval needed: " + p.Tool
	}
	a := core.Action{Kind: core.ActionReply, Conv: conv, Text: p.WithHint(text)}
	ids, err := g.reply(ctx, a, g.buttons(p))
	if err != nil {
		return fmt.Errorf("discord: approval request to %s: %w", conv.Key(), err)
	}
	if len(ids) > 0 {
		ref := promptRef{channel: channelOf(conv), msgID: ids[len(ids)-1]}
		if len(ids) == 1 {
			ref.text = text // the whole request is in that message
		}
		if r, late := g.prompts.Add(p, ref); late {
			g.UpdateApproval(ctx, r) // resolved while the request was being sent
		}
	}
	return nil
}

// buttons returns the approval buttons for p, or none when the token does
// not fit a custom_id (the typed commands still work).
func (g *Gateway) buttons(p core.ApprovalPrompt) []discordgo.MessageComponent {
	row := []discordgo.MessageComponent{
		discordgo.Button{Label: "Approve", Style: discordgo.SuccessButton, CustomID: idApprove + p.Token},
		discordgo.Button{Label: "Deny", Style: discordgo.DangerButton, CustomID: idDeny + p.Token},
	}
	if p.AllowGrant {
		row = append(row, discordgo.Button{Label: "Approve 30 min", Style: discordgo.PrimaryButton, CustomID: idApproveGrant + p.Token})
	}
	if p.AllowAlways {
		row = append(row, discordgo.Button{Label: "Approve always", Style: discordgo.PrimaryButton, CustomID: idApproveAlways + p.Token})
	}
	if utf8.RuneCountInString(idApproveAlways+p.Token) > maxCustomID || p.Token == "" {
		g.log.Warn().Int("bytes", len(p.Token)).Msg("approval token does not fit a button; sending the request without buttons")
		return nil
	}
	return []discordgo.MessageComponent{discordgo.ActionsRow{Components: row}}
}

// parseCustomID reads an approval button's custom_id.
func parseCustomID(id string) (core.ApprovalDecision, string, bool) {
	for _, p := range []struct {
		prefix string
		d      core.ApprovalDecision
	}{{idApprove, core.DecisionApprove}, {idDeny, core.DecisionDeny}, {idApproveAlways, core.DecisionApproveAlways}, {idApproveGrant, core.DecisionApproveGrant}} {
		if token, ok := strings.CutPrefix(id, p.prefix); ok && token != "" {
			return p.d, token, true
		}
	}
	return 0, "", false
}

// UpdateApproval edits every request message of the approval that does
// not show this outcome yet: the hint gives way to the outcome line (who
// and when) and the buttons are removed. The broker announces a resolution
// to each conversation that saw the request, so the same one may arrive
// several times. Failures are logged by the delivery layer; the broker
// sends the resolution notice as a reply anyway.
func (g *Gateway) UpdateApproval(ctx context.Context, r core.ApprovalResolution) {
	g.prompts.Update(r, func(ref promptRef) error {
		conv := core.Conversation{Gateway: Name, Chat: ref.channel}
		edit := &discordgo.MessageEdit{ID: ref.msgID, Channel: ref.channel, Components: &[]discordgo.MessageComponent{}, AllowedMentions: mentions()}
		if body := ref.text + "\n\n" + gateways.OutcomeLine(r); ref.text != "" && utf8.RuneCountInString(body) <= chunkLimit {
			edit.Content = &body
		} // else no room for the outcome: only the buttons go
		return g.out.Edit(ctx, conv, func(ctx context.Context) error {
			rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
			defer cancel()
			_, err := g.s.ChannelMessageEditComplex(edit, discordgo.WithContext(rctx))
			return g.scrub(err)
		})
	})
}

// promptRef is a request message with buttons the gateway sent.
type promptRef struct {
	channel string
	msgID   string
	text    string // the request without the hint; "" when it took several messages
}

var _ core.PromptSizer = (*Gateway)(nil)

// PromptRoom is how many runes of an approval request show as one
// message: chunkLimit less room to spare.
func (g *Gateway) PromptRoom() int { return chunkLimit - 190 }
