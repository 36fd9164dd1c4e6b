package slack

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/slack-go/slack"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// newOutbox builds the gateway's delivery layer from its configuration.
func (g *Gateway) newOutbox() (*gateways.Outbox, error) {
	out, err := gateways.NewOutbox(gateways.OutboxConfig{
		Limit:    chunkLimit,
		Pace:     g.cfg.Pace,
		Backoff:  g.cfg.Backoff,
		RetryFor: g.cfg.RetryFor,
		Classify: classify,
		Log:      g.log,
		Metrics:  g.delivery,
		Shared:   g.shared,
		Sender:   Name + ":" + g.team + ":" + g.botUser,
	})
	if err != nil {
		return nil, fmt.Errorf("slack: %w", err)
	}
	return out, nil
}

// Act delivers an ActionReply: the answer to a slash command goes to its
// user only; any other reply is posted in the conversation's thread,
// split, paced and retried by the delivery layer. (Approval requests and
// their resolutions come through PromptApproval and UpdateApproval.)
// It returns an error when the reply finally could not be delivered.
func (g *Gateway) Act(ctx context.Context, a core.Action) (core.Result, error) {
	if a.Kind != core.ActionReply {
		return core.Result{}, fmt.Errorf("slack: cannot act on a %s action", a.Kind)
	}
	var err error
	stranger, isStranger := g.stranger(a)
	switch call, ok := g.slashes.get(a.ReplyTo); {
	case ok:
		err = g.answerSlash(ctx, a.Conv, call, a.Text)
	case isStranger && a.Conv.Thread != "":
		// A reply to a stranger in a channel (the allow list's refusal,
		// /whoami, the store's unavailable note) is shown to them only: a
		// post would make Slack list the bot in the thread
		// (conversations.replies), and partOf would then take the thread
		// for one the bot is part of and hand the allowed users' messages
		// there to the model.
		err = g.answerSlash(ctx, a.Conv, slashCall{channel: a.Conv.Chat, thread: a.Conv.Thread, user: stranger}, a.Text)
	default:
		// A reply to a stranger (in a direct message) does not make the
		// bot part of the thread: strangers add nothing to its memory.
		err = g.reply(ctx, a.Conv, a.Text, !isStranger)
	}
	if err != nil {
		return core.Result{}, fmt.Errorf("slack: reply to %s: %w", a.Conv.Key(), err)
	}
	return core.Result{}, nil
}

// stranger returns the Slack member id of the sender whose message caused
// a, and true, when that sender does not pass the allow list; false for
// an allowed sender and for an action of no Slack sender's (the
// gateway's own notices, an approver elsewhere).
func (g *Gateway) stranger(a core.Action) (string, bool) {
	user, ok := strings.CutPrefix(string(a.From), Name+":")
	if !ok || g.allowed(a.From, a.Conv) {
		return "", false
	}
	return user, true
}

// reply posts text, converted to mrkdwn, in conv's thread; with
// takePart, the thread is remembered as one the bot is part of.
func (g *Gateway) reply(ctx context.Context, conv core.Conversation, text string, takePart bool) error {
	if conv.Chat == "" {
		return errors.New("no channel")
	}
	_, err := g.out.Reply(ctx, conv, text, func(ctx context.Context, c gateways.Chunk) (string, error) {
		return g.post(ctx, conv, takePart, slack.MsgOptionText(toMrkdwn(c.Text), false))
	})
	return err
}

// post makes one chat.postMessage attempt in conv's thread and returns
// the message's ts. With takePart, a thread the bot posted in is
// remembered as one it is part of.
func (g *Gateway) post(ctx context.Context, conv core.Conversation, takePart bool, opts ...slack.MsgOption) (string, error) {
	if conv.Thread != "" {
		opts = append(opts, slack.MsgOptionTS(conv.Thread))
	}
	opts = append(opts, slack.MsgOptionDisableLinkUnfurl())
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	_, ts, err := g.api.PostMessageContext(rctx, conv.Chat, opts...)
	if err != nil {
		return "", g.scrub(err)
	}
	if takePart {
		g.takePart(ctx, conv)
	}
	return ts, nil
}

// transientErrors are Slack's "ok": false errors worth retrying.
var transientErrors = map[string]bool{
	"internal_error": true, "fatal_error": true, "service_unavailable": true,
	"request_timeout": true, "ratelimited": true,
}

// classify tells the delivery layer what a failed request means: a 429
// pauses the channel for its Retry-After, 5xx, transport errors,
// malformed answers and Slack's own transient errors are retried with
// backoff, anything else (invalid_blocks, msg_too_long, channel_not_found,
// invalid_auth, another 4xx) is permanent.
func classify(err error) gateways.Failure {
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	var se slack.SlackErrorResponse
	switch {
	case errors.As(err, &rl):
		if rl.RetryAfter <= 0 {
			return gateways.Failure{Verdict: gateways.Transient}
		}
		return gateways.Failure{Verdict: gateways.RetryAfter, After: rl.RetryAfter}
	case errors.As(err, &sc):
		if sc.Code >= 500 || sc.Code == 408 || sc.Code == 429 {
			return gateways.Failure{Verdict: gateways.Transient}
		}
		return gateways.Failure{Verdict: gateways.Permanent}
	case errors.As(err, &se):
		if transientErrors[se.Err] {
			return gateways.Failure{Verdict: gateways.Transient}
		}
		return gateways.Failure{Verdict: gateways.Permanent}
	}
	return gateways.Failure{Verdict: gateways.Transient}
}

// DeliveryStats returns the counters of the gateway's outbound delivery.
func (g *Gateway) DeliveryStats() gateways.DeliveryStats { return g.out.Stats() }

// answerSlash sends text to the user who ran a slash command, visible to
// them only: through the command's response_url (Slack allows five posts
// to one), then chat.postEphemeral. A response_url that fails (used up,
// expired, down, too slow) is not tried again for this answer: that
// chunk and the rest go by chat.postEphemeral.
func (g *Gateway) answerSlash(ctx context.Context, conv core.Conversation, call slashCall, text string) error {
	viaURL := strings.HasPrefix(call.responseURL, "http")
	_, err := g.out.ReplyPrivate(ctx, conv, text, func(ctx context.Context, c gateways.Chunk) (string, error) {
		if viaURL && c.Index < 5 {
			err := g.respond(ctx, call, toMrkdwn(c.Text))
			if err == nil {
				return "", nil
			}
			viaURL = false
			g.log.Warn().Str("conv", conv.Key()).Err(err).Msg("response_url failed; answering by chat.postEphemeral")
		}
		return "", g.ephemeral(ctx, call, toMrkdwn(c.Text))
	})
	return err
}

// respond makes one attempt at posting text to call's response_url, as an
// ephemeral message.
func (g *Gateway) respond(ctx context.Context, call slashCall, text string) error {
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	msg := &slack.WebhookMessage{Text: text, ResponseType: slack.ResponseTypeEphemeral}
	err := slack.PostWebhookCustomHTTPContext(rctx, call.responseURL, g.cfg.HTTPClient, msg)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		err = ue.Err // the URL itself is a credential, good for 30 minutes
	}
	if err != nil {
		return fmt.Errorf("response_url: %w", g.scrub(err))
	}
	return nil
}

// ephemeral makes one chat.postEphemeral attempt at showing text to
// call's user only.
func (g *Gateway) ephemeral(ctx context.Context, call slashCall, text string) error {
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if call.thread != "" {
		opts = append(opts, slack.MsgOptionTS(call.thread))
	}
	_, err := g.api.PostEphemeralContext(rctx, call.channel, call.user, opts...)
	return g.scrub(err)
}
