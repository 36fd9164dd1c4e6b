package telegram

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf16"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// maxToast is the longest answerCallbackQuery text, in UTF-16 units.
const maxToast = 200

// maxCallbackData is the longest callback_data, in bytes.
const maxCallbackData = 64

// The callback_data prefixes of the approval buttons: "a:TOKEN" etc.
const (
	dataApprove       = "a:"
	dataDeny          = "d:"
	dataApproveAlways = "A:"
	dataApproveGrant  = "g:" // approve, and grant identical calls for core.ButtonGrant
)

// onCallback resolves a button press in the background and answers it.
// The presser's identity comes from the callback's sender, never from its
// data: data only names the approval, the broker decides who may resolve it.
// The answer (its toast) is the press's acknowledgement: the broker hands
// it over before an approved action starts, and it is sent then.
func (g *Gateway) onCallback(id int, cq *tgbotapi.CallbackQuery, topic string) {
	rs := g.run.Load()
	if rs == nil {
		return
	}
	g.goBackground(func() {
		answered := false
		answer := func(text string) {
			answered = true
			if err := g.answerCallback(rs.ctx, tgbotapi.NewCallback(cq.ID, truncateUTF16(text, maxToast))); err != nil {
				g.log.Warn().Int("update_id", id).Err(err).Msg("answerCallbackQuery failed")
			}
		}
		if text := g.press(rs.ctx, cq, topic, answer); !answered {
			answer(text)
		}
	})
}

// answerCallback answers a callback query within the send timeout,
// waiting out a 429's retry_after and asking again. Its error is scrubbed.
func (g *Gateway) answerCallback(ctx context.Context, c tgbotapi.CallbackConfig) error {
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	for {
		_, err := g.api(rctx).Request(c)
		if err == nil {
			return nil
		}
		wait := g.retryAfter(err)
		if wait <= 0 || gateways.Sleep(rctx, wait) != nil {
			return g.scrub(err)
		}
	}
}

// press turns a callback into an Approvals.Press, which hands the toast to
// answer before an approved action starts, and returns the toast. The
// press is of the conversation of the pressed message (with its forum
// topic).
func (g *Gateway) press(ctx context.Context, cq *tgbotapi.CallbackQuery, topic string, answer func(toast string)) string {
	d, token, ok := parseCallbackData(cq.Data)
	switch {
	case cq.From == nil || cq.From.IsBot:
		return "This button cannot be used here."
	case !ok:
		return "Unknown button."
	case g.approvals == nil:
		return "Approvals are not available."
	}
	conv := core.Conversation{Gateway: Name}
	if cq.Message != nil && cq.Message.Chat != nil {
		conv.Chat, conv.Thread = strconv.FormatInt(cq.Message.Chat.ID, 10), topic
	}
	from := identity(cq.From.ID)
	out := g.approvals.Press(ctx, from, conv, token, d, answer)
	g.log.Info().Str("from", string(from)).Str("conv", conv.Key()).Str("toast", out).Msg("approval button pressed")
	return out
}

// callbackData is a button's data for decision d on token.
func callbackData(d core.ApprovalDecision, token string) string {
	switch d {
	case core.DecisionApprove:
		return dataApprove + token
	case core.DecisionDeny:
		return dataDeny + token
	case core.DecisionApproveAlways:
		return dataApproveAlways + token
	case core.DecisionApproveGrant:
		return dataApproveGrant + token
	}
	return ""
}

func parseCallbackData(data string) (core.ApprovalDecision, string, bool) {
	for _, p := range []struct {
		prefix string
		d      core.ApprovalDecision
	}{{dataApprove, core.DecisionApprove}, {dataDeny, core.DecisionDeny}, {dataApproveAlways, core.DecisionApproveAlways}, {dataApproveGrant, core.DecisionApproveGrant}} {
		if token, ok := strings.CutPrefix(data, p.prefix); ok && token != "" {
			return p.d, token, true
		}
	}
	return 0, "", false
}

// truncateUTF16 shortens s to at most n UTF-16 units, marking the cut.
func truncateUTF16(s string, n int) string {
	if gateways.UTF16Len(s) <= n {
		return s
	}
	units := 0
	for i, r := range s {
		w := len(utf16.Encode([]rune{r}))
		if units+w > n-1 {
			return s[:i] + "…"
		}
		units += w
	}
	return s
}
