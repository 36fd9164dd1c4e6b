package slack

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// inboundQueue bounds the signals acknowledged but not yet handed to the
// engine. Receiving acknowledges first and queues after, so a full engine
// queue never delays an acknowledgement; only past this many waiting
// signals does receiving wait too.
const inboundQueue = 1024

// fileShare is the subtype of a message event that shares files.
const fileShare = "file_share"

// inbound is one signal waiting to be submitted.
type inbound struct {
	sig core.Signal
}

// submitLoop hands queued signals to the engine in arrival order until
// the gateway stops.
func (g *Gateway) submitLoop(rs *runState) {
	for {
		select {
		case <-rs.ctx.Done():
			return
		case in := <-rs.queue:
			if err := rs.inbox.Submit(rs.ctx, in.sig); err != nil {
				if gateways.Unavailable(err) {
					// Acknowledged already (the store was lost since):
					// the sender is to send it again.
					g.log.Warn().Str("conv", in.sig.Conv.Key()).Err(err).Msg("message refused: the store does not answer; the sender is told to try again")
					g.replyLater(in.sig.Conv, in.sig.From, gateways.UnavailableNote)
					continue
				}
				if rs.ctx.Err() == nil {
					g.log.Warn().Str("conv", in.sig.Conv.Key()).Err(err).Msg("message not handed to the engine")
				}
				return
			}
		}
	}
}

// enqueue queues s for the engine; false when the gateway is stopping.
func (g *Gateway) enqueue(rs *runState, s core.Signal) bool {
	select {
	case rs.queue <- inbound{sig: s}:
		return true
	case <-rs.ctx.Done():
		return false
	}
}

// onEventsAPI handles one Events API callback (from either mode). Events
// Slack delivers again (same event_id) are handled once.
func (g *Gateway) onEventsAPI(rs *runState, ev slackevents.EventsAPIEvent) {
	if cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent); ok && cb.EventID != "" {
		if !g.events.add(cb.EventID) {
			g.log.Debug().Str("event_id", cb.EventID).Msg("ignoring an event delivered again")
			return
		}
	}
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.MessageEvent:
		g.onMessage(rs, e)
	case *slackevents.AppMentionEvent:
		g.onMention(rs, e)
	default:
		g.log.Debug().Str("type", ev.InnerEvent.Type).Msg("ignoring an event of another kind")
	}
}

// onMessage handles a message event, plain or sharing files (file_share):
// a DM, or (with channel: all, or in a thread the bot is part of: see partOf) a
// channel message. Bot messages, the bot's own, edits and other subtypes
// are ignored, and so are channel messages that mention the bot: those
// arrive as app_mention too. A channel message's files are taken only in
// a thread the bot is part of (it talks with the bot there); with channel:
// all, a top-level message that does not mention the bot is its text alone.
func (g *Gateway) onMessage(rs *runState, e *slackevents.MessageEvent) {
	if (e.SubType != "" && e.SubType != fileShare) || e.BotID != "" || e.User == "" || e.User == g.botUser || e.Channel == "" || e.TimeStamp == "" {
		return
	}
	var files []slack.File
	if e.Message != nil {
		files = e.Message.Files
	}
	if e.ChannelType == "im" {
		g.submit(rs, core.Conversation{Gateway: Name, Chat: e.Channel}, e.User, e.Text, files, e.TimeStamp, true)
		return
	}
	if g.mentions(e.Text) {
		return // the app_mention of the same message is handled
	}
	thread := e.ThreadTimeStamp
	inThread := false
	if thread != "" && (g.cfg.Channel != ChannelAll || len(files) > 0) {
		// With channel: all, only files need to know (no lookup otherwise).
		inThread = g.partOf(rs.ctx, e.Channel, thread, e.User)
	}
	if g.cfg.Channel != ChannelAll && !inThread {
		return
	}
	if thread == "" {
		thread = e.TimeStamp
	}
	if !inThread {
		files = nil // channel: all; a message that does not address the bot: its text alone
	}
	g.submit(rs, core.Conversation{Gateway: Name, Chat: e.Channel, Thread: thread}, e.User, e.Text, files, e.TimeStamp, false)
}

// onMention handles an app_mention: answered in the message's thread (a
// top-level message starts one under itself).
func (g *Gateway) onMention(rs *runState, e *slackevents.AppMentionEvent) {
	if e.BotID != "" || e.User == "" || e.User == g.botUser || e.Channel == "" || e.TimeStamp == "" || e.Edited != nil {
		return
	}
	thread := e.ThreadTimeStamp
	if thread == "" {
		thread = e.TimeStamp
	}
	conv := core.Conversation{Gateway: Name, Chat: e.Channel, Thread: thread}
	private := strings.HasPrefix(e.Channel, "D")
	if private {
		conv.Thread = ""
	}
	g.submit(rs, conv, e.User, g.stripMention(e.Text), e.Files, e.TimeStamp, private)
}

// submit queues a message signal with its text and shared files, once
// per message (channel and ts): Slack may deliver one message as two
// events, with two event ids.
func (g *Gateway) submit(rs *runState, conv core.Conversation, user, text string, files []slack.File, ts string, private bool) {
	text = unescapeSlack(strings.TrimSpace(text))
	if text == "" && len(files) == 0 {
		return
	}
	if !g.messages.add(conv.Chat + ":" + ts) {
		return // the same message as another event (a DM mention: message.im and app_mention)
	}
	if g.allowed(identity(user), conv) {
		g.takePart(rs.ctx, conv) // a stranger's thread is never remembered
	}
	g.enqueue(rs, core.Signal{
		Kind:        core.KindMessage,
		Conv:        conv,
		From:        identity(user),
		Text:        text,
		Attachments: g.attachments(files),
		MessageID:   ts,
		Private:     private,
		At:          tsTime(ts),
	})
}

func identity(user string) core.Identity { return core.Identity(Name + ":" + user) }

// mentionRE matches a user mention, <@U123> or <@U123|name>.
var mentionRE = regexp.MustCompile(`<@([A-Z0-9]+)(?:\|[^>]*)?>`)

// mentions reports whether text mentions the bot.
func (g *Gateway) mentions(text string) bool {
	for _, m := range mentionRE.FindAllStringSubmatch(text, -1) {
		if m[1] == g.botUser {
			return true
		}
	}
	return false
}

// stripMention removes the bot's mentions from text.
func (g *Gateway) stripMention(text string) string {
	out := mentionRE.ReplaceAllStringFunc(text, func(m string) string {
		if mentionRE.FindStringSubmatch(m)[1] == g.botUser {
			return ""
		}
		return m
	})
	return strings.Join(strings.Fields(out), " ")
}

// slackUnescaper undoes the three escapes Slack applies to message text
// (immutable once built; safe for concurrent use).
var slackUnescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// unescapeSlack undoes the three escapes Slack applies to message text.
func unescapeSlack(s string) string { return slackUnescaper.Replace(s) }

// tsTime converts a Slack ts ("1700000000.000100") to a time.
func tsTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Now()
	}
	us, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	return time.Unix(s, us*1000)
}

// replyLater sends text to conv in the background, as a reply to a
// message of from (a stranger's in a channel is answered to them only:
// see Act).
func (g *Gateway) replyLater(conv core.Conversation, from core.Identity, text string) {
	rs := g.run.Load()
	if rs == nil {
		return
	}
	g.goBackground(func() {
		if _, err := g.Act(rs.ctx, core.Action{Kind: core.ActionReply, Conv: conv, From: from, Text: text}); err != nil && rs.ctx.Err() == nil {
			g.log.Error().Err(err).Str("conv", conv.Key()).Msg("reply failed")
		}
	})
}
