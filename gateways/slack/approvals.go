package slack

import (
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// The action_ids of the approval buttons; a button's value is the token,
// which only names the approval: the broker decides who may resolve it.
const (
	actionApprove       = "gh_approve"
	actionDeny          = "gh_deny"
	actionApproveAlways = "gh_approve_always"
	actionApproveGrant  = "gh_approve_30m" // approve, and grant identical calls for core.ButtonGrant
)

// sectionLimit is the longest section text Slack accepts, in characters.
const sectionLimit = 3000

// maxSections bounds the section blocks of a request (Slack allows 50
// blocks a message, one of them the buttons).
const maxSections = 40

// PromptApproval sends text, the approval request the core wrote, to conv
// as a Block Kit message: the text and the typed-command hint in section
// blocks, escaped, and an actions block with Approve, Deny and, where
// allowed, Approve always. A request too long for one message is sent as
// a reply first and followed by a short message with the buttons.
func (g *Gateway) PromptApproval(ctx context.Context, conv core.Conversation, text string, p core.ApprovalPrompt) error {
	if strings.TrimSpace(text) == "" {
		text = "Approval needed: " + p.Tool
	}
	sections := splitSections(text) // what the request shows once resolved
	if len(sections) > maxSections {
		if err := g.reply(ctx, conv, text, true); err != nil {
			return fmt.Errorf("slack: approval request to %s: %w", conv.Key(), err)
		}
		text = "Approval needed: " + p.Tool + " (the request is above)"
		sections = []string{text}
	}
	blocks := sectionBlocks(splitSections(p.WithHint(text)))
	blocks = append(blocks, approvalButtons(p))
	fallback := "Approval needed: " + p.Tool
	var late *core.ApprovalResolution // resolved while the request was being sent
	_, err := g.out.Reply(ctx, conv, fallback, func(ctx context.Context, c gateways.Chunk) (string, error) {
		ts, err := g.post(ctx, conv, true, slack.MsgOptionText(escapeMrkdwn(c.Text), false), slack.MsgOptionBlocks(blocks...))
		if err != nil {
			return "", err
		}
		if c.Last() {
			if r, ok := g.prompts.Add(p, promptRef{conv: conv, ts: ts, sections: sections}); ok {
				late = &r
			}
		}
		return ts, nil
	})
	if late != nil {
		g.UpdateApproval(ctx, *late)
	}
	if err != nil {
		return fmt.Errorf("slack: approval request to %s: %w", conv.Key(), err)
	}
	return nil
}

// splitSections cuts text into section texts Slack accepts once escaped.
func splitSections(text string) []string {
	return gateways.Split(text, sectionLimit-100, escapedLen)
}

// sectionBlocks renders texts as mrkdwn section blocks, escaped.
func sectionBlocks(texts []string) []slack.Block {
	blocks := make([]slack.Block, 0, len(texts)+2)
	for _, t := range texts {
		if strings.TrimSpace(t) == "" {
			continue
		}
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, escapeMrkdwn(t), false, true), nil, nil))
	}
	return blocks
}

// approvalButtons is the actions block of a request.
func approvalButtons(p core.ApprovalPrompt) slack.Block {
	approve := slack.NewButtonBlockElement(actionApprove, p.Token, slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false))
	approve.Style = slack.StylePrimary
	deny := slack.NewButtonBlockElement(actionDeny, p.Token, slack.NewTextBlockObject(slack.PlainTextType, "Deny", false, false))
	deny.Style = slack.StyleDanger
	elems := []slack.BlockElement{approve, deny}
	if p.AllowGrant {
		elems = append(elems, slack.NewButtonBlockElement(actionApproveGrant, p.Token, slack.NewTextBlockObject(slack.PlainTextType, "Approve 30 min", false, false)))
	}
	if p.AllowAlways {
		elems = append(elems, slack.NewButtonBlockElement(actionApproveAlways, p.Token, slack.NewTextBlockObject(slack.PlainTextType, "Approve always", false, false)))
	}
	return slack.NewActionBlock("gh_approval", elems...)
}

// decision returns the meaning of a button's action_id.
func decision(actionID string) (core.ApprovalDecision, bool) {
	switch actionID {
	case actionApprove:
		return core.DecisionApprove, true
	case actionDeny:
		return core.DecisionDeny, true
	case actionApproveAlways:
		return core.DecisionApproveAlways, true
	case actionApproveGrant:
		return core.DecisionApproveGrant, true
	}
	return 0, false
}

// UpdateApproval updates every request message of the approval that does
// not show this outcome yet: the request's text (without the typed-command
// hint), the outcome, who resolved it and when; the buttons removed. The broker announces a resolution to every conversation that
// saw the request, so the same one may arrive several times. Failures are
// logged: the resolution reply is sent anyway.
func (g *Gateway) UpdateApproval(ctx context.Context, r core.ApprovalResolution) {
	known := g.prompts.Update(r, func(ref promptRef) error {
		line := gateways.OutcomeLine(r)
		blocks := sectionBlocks(ref.sections)
		blocks = append(blocks, slack.NewContextBlock("gh_outcome", slack.NewTextBlockObject(slack.MarkdownType, escapeMrkdwn(line), false, true)))
		err := g.out.Edit(ctx, ref.conv, func(ctx context.Context) error {
			rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
			defer cancel()
			_, _, _, err := g.api.UpdateMessageContext(rctx, ref.conv.Chat, ref.ts,
				slack.MsgOptionText(escapeMrkdwn(line), false), slack.MsgOptionBlocks(blocks...), slack.MsgOptionParse(false))
			return g.scrub(err)
		})
		if err != nil {
			g.log.Warn().Str("conv", ref.conv.Key()).Str("ts", ref.ts).Err(err).Msg("cannot update the approval request")
		}
		return err
	})
	if known == 0 {
		g.log.Debug().Msg("no request message to update for a resolution")
	}
}

// promptRef is a request message with buttons the gateway sent.
type promptRef struct {
	conv     core.Conversation
	ts       string
	sections []string // the request's text without the hint, before escaping
}

var _ core.PromptSizer = (*Gateway)(nil)

// PromptRoom is how many runes of an approval request show as one section
// block (sectionLimit less room for mrkdwn escapes).
func (g *Gateway) PromptRoom() int { return sectionLimit - 400 }
