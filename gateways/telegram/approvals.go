package telegram

import (
	"context"
	"html"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// promptKeep is how long past its expiry a request message is remembered,
// for the late resolutions (expired, executed) that edit it.
const promptKeep = time.Hour

// attachKeyboard adds the approval buttons to msg.
func (g *Gateway) attachKeyboard(msg *tgbotapi.MessageConfig, p core.ApprovalPrompt) {
	row := []tgbotapi.InlineKeyboardButton{
		tgbotapi.NewInlineKeyboardButtonData("✅ Approve", callbackData(core.DecisionApprove, p.Token)),
		tgbotapi.NewInlineKeyboardButtonData("❌ Deny", callbackData(core.DecisionDeny, p.Token)),
	}
	if p.AllowAlways {
		row = append(row, tgbotapi.NewInlineKeyboardButtonData("♾ Approve always", callbackData(core.DecisionApproveAlways, p.Token)))
	}
	for _, b := range row {
		if len(*b.CallbackData) > maxCallbackData {
			g.log.Warn().Int("bytes", len(*b.CallbackData)).Msg("approval token too long for buttons; sending the request without them")
			return
		}
	}
	msg.ReplyMarkup = tgbotapi.NewInlineKeyboardMarkup(row)
}

// promptRef is a request message with buttons the gateway sent.
type promptRef struct {
	chat  int64
	msgID int
	text  string // what it shows once resolved, before the outcome line: the request without the hint, rendered as sent; "" when it cannot show it
	mode  string // parse mode it was sent with
	keep  time.Time
	shown string // the status the message shows; "" while pending
}

// promptBook remembers, by token, the request messages to edit when the
// approval is resolved. It lives in memory: after a restart a resolution
// is still sent as a reply, only the old buttons stay.
type promptBook struct {
	mu sync.Mutex
	m  map[string][]promptRef
}

func newPromptBook() *promptBook { return &promptBook{m: make(map[string][]promptRef)} }

func (b *promptBook) add(p core.ApprovalPrompt, ref promptRef) {
	now := time.Now()
	ref.keep = p.Expires.Add(promptKeep)
	if p.Expires.IsZero() {
		ref.keep = now.Add(24 * time.Hour)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for token, refs := range b.m {
		if len(refs) > 0 && refs[0].keep.Before(now) {
			delete(b.m, token)
		}
	}
	b.m[p.Token] = append(b.m[p.Token], ref)
}

func (b *promptBook) get(token string) []promptRef {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]promptRef(nil), b.m[token]...)
}

// shown records that a request message now shows status.
func (b *promptBook) shown(token string, ref promptRef, status string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, r := range b.m[token] {
		if r.chat == ref.chat && r.msgID == ref.msgID {
			b.m[token][i].shown = status
		}
	}
}

// UpdateApproval edits every request message of the approval that does
// not show this outcome yet: the hint gives way to the outcome line and the
// buttons are removed (the broker announces a resolution to each
// conversation that saw the request, so the same one may arrive several
// times). Failures are logged: the broker sends the resolution notice as a
// reply anyway.
func (g *Gateway) UpdateApproval(ctx context.Context, r core.ApprovalResolution) {
	refs := g.prompts.get(r.Token)
	if len(refs) == 0 {
		g.log.Debug().Msg("no request message to edit for a resolution")
	}
	for _, ref := range refs {
		if ref.shown == r.Status {
			continue
		}
		if err := g.editResolved(ctx, ref, r); err != nil {
			g.log.Warn().Int64("chat", ref.chat).Int("message_id", ref.msgID).Err(err).Msg("cannot edit the approval request")
			continue
		}
		g.prompts.shown(r.Token, ref, r.Status)
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
	line := outcomeLine(r)
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

// outcomeLine is the line added to a resolved request:
// "✅ Approved by telegram:42 at 2026-05-01 14:03 UTC".
func outcomeLine(r core.ApprovalResolution) string {
	line := statusText(r.Status)
	if r.By != "" {
		line += " by " + string(r.By)
	}
	if !r.At.IsZero() {
		line += " at " + r.At.UTC().Format("2006-01-02 15:04 UTC")
	}
	return line
}

func statusText(status string) string {
	switch status {
	case "approved":
		return "✅ Approved"
	case "executed":
		return "✅ Approved and run"
	case "denied":
		return "❌ Denied"
	case "expired":
		return "⌛ Expired"
	case "failed":
		return "⚠️ Approved, but it failed"
	}
	return "Resolved: " + status
}
