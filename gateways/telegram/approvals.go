package telegram

import (
	"context"
	"html"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// attachKeyboard adds the approval buttons to msg: Approve and Deny, then
// on a second row (four labels do not fit one row of a phone) Approve 30
// min and Approve always where p offers them.
func (g *Gateway) attachKeyboard(msg *tgbotapi.MessageConfig, p core.ApprovalPrompt) {
	rows := [][]tgbotapi.InlineKeyboardButton{{
		tgbotapi.NewInlineKeyboardButtonData("✅ Approve", callbackData(core.DecisionApprove, p.Token)),
		tgbotapi.NewInlineKeyboardButtonData("❌ Deny", callbackData(core.DecisionDeny, p.Token)),
	}}
	var more []tgbotapi.InlineKeyboardButton
	if p.AllowGrant {
		more = append(more, tgbotapi.NewInlineKeyboardButtonData("⏱ Approve 30 min", callbackData(core.DecisionApproveGrant, p.Token)))
	}
	if p.AllowAlways {
		more = append(more, tgbotapi.NewInlineKeyboardButtonData("♾ Approve always", callbackData(core.DecisionApproveAlways, p.Token)))
	}
	if len(more) > 0 {
		rows = append(rows, more)
	}
	for _, row := range rows {
		for _, b := range row {
			if len(*b.CallbackData) > maxCallbackData {
				g.log.Warn().Int("bytes", len(*b.CallbackData)).Msg("approval token too long for buttons; sending the request without them")
				return
			}
		}
	}
	msg.ReplyMarkup = tgbotapi.NewInlineKeyboardMarkup(rows...)
}

// promptRef is a request message with buttons the gateway sent.
type promptRef struct {
	chat  int64
	msgID int
	text  string // what it shows once resolved, before the outcome line: the request without the hint, rendered as sent; "" when it cannot show it
	mode  string // parse mode it was sent with
}

// UpdateApproval edits every request message of the approval that does
// not show this outcome yet: the hint gives way to the outcome line and the
// buttons are removed (the broker announces a resolution to each
// conversation that saw the request, so the same one may arrive several
// times). Failures are logged: the broker sends the resolution notice as a
// reply anyway.
func (g *Gateway) UpdateApproval(ctx context.Context, r core.ApprovalResolution) {
	known := g.prompts.Update(r, func(ref promptRef) error {
		err := g.editResolved(ctx, ref, r)
		if err != nil {
			g.log.Warn().Int64("chat", ref.chat).Int("message_id", ref.msgID).Err(err).Msg("cannot edit the approval request")
		}
		return err
	})
	if known == 0 {
		g.log.Debug().Msg("no request message to edit for a resolution")
	}
}

// resolvedBody is what the request message sent as chunk c shows once the
// request is resolved, before the outcome line: the request text without
// the hint, rendered as the chunk was sent (mode). Only a request sent as
// one message can show it; the last message of a longer request keeps
// its text ("" here) and loses only its buttons.
func resolvedBody(text string, c gateways.Chunk, mode string) string {
	if c.Count != 1 {
		return ""
	}
	if mode == tgbotapi.ModeHTML {
		return renderHTML(text)
	}
	return text
}

func (g *Gateway) editResolved(ctx context.Context, ref promptRef, r core.ApprovalResolution) error {
	line := gateways.OutcomeLine(r)
	if ref.mode == tgbotapi.ModeHTML {
		line = html.EscapeString(line)
	}
	text := ref.text + "\n\n" + line
	var c tgbotapi.Chattable
	if ref.text != "" && gateways.UTF16Len(text) <= chunkLimit {
		edit := tgbotapi.NewEditMessageText(ref.chat, ref.msgID, text)
		edit.ParseMode = ref.mode
		c = edit
	} else { // no room for the outcome: only remove the buttons
		c = tgbotapi.EditMessageReplyMarkupConfig{BaseEdit: tgbotapi.BaseEdit{ChatID: ref.chat, MessageID: ref.msgID}}
	}
	_, err := g.send(ctx, ref.chat, c)
	if isNotModified(err) {
		return nil
	}
	return err
}

var _ core.PromptSizer = (*Gateway)(nil)

// promptRoom is what an approval request may take to be one message:
// chunkLimit less room for the HTML its Markdown becomes and for
// characters that count twice in UTF-16.
const promptRoom = 3500

// PromptRoom is how many runes of an approval request show as one message.
func (g *Gateway) PromptRoom() int { return promptRoom }
