package core

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// The notes a live reply shows when its text is withdrawn.
const (
	// withdrawnNote replaces a reply the gates refused, or one a failed
	// step left unfinished.
	withdrawnNote = "(reply withdrawn)"
	// retryNote replaces the text of a provider that failed mid-answer
	// while the next one is asked.
	retryNote = "(answer cut off; asking again)"
)

// abandonFor bounds how long withdrawing a live reply may take once its
// turn has failed or been cancelled.
const abandonFor = 30 * time.Second

// liveSink shows a streamed answer through the gateway's LiveReply (an
// llm.TextSink). The live reply starts at the first streamed text. What it
// is shown is the text up to its last whitespace, so that no word — no
// secret — is shown half-written, and each such partial passes the gates
// and the redaction as a reply would: the first partial the gates refuse
// stops the updates. One sink serves one request to the provider.
type liveSink struct {
	ctx      context.Context // the turn's
	work     context.Context // the live reply's own work: the engine's
	log      zerolog.Logger
	streamer ReplyStreamer
	gates    []Gate
	redact   func(string) string
	reply    Action // the reply the text would be (Text empty)

	live    LiveReply // nil until the first text, or after Discard
	cannot  bool      // the gateway cannot show this reply live
	refused bool      // a partial was refused: no more updates
	shown   string    // the last partial shown
}

var _ llm.TextSink = (*liveSink)(nil)

// newLiveSink returns a sink for the turn's next request, or nil when its
// gateway cannot show replies live.
func (t *turnState) newLiveSink(ctx context.Context) *liveSink {
	a, ok := t.actuators.Get(t.sig.Conv.Gateway)
	if !ok {
		return nil
	}
	rs, ok := a.(ReplyStreamer)
	if !ok {
		return nil
	}
	return &liveSink{
		ctx: ctx, work: t.work, log: t.log, streamer: rs, gates: t.cfg.Gates, redact: t.cfg.Redact,
		reply: Action{Kind: ActionReply, Conv: t.sig.Conv, From: t.sig.From, ReplyTo: t.sig.MessageID},
	}
}

// Text implements llm.TextSink.
func (s *liveSink) Text(soFar string) {
	if s.cannot || s.refused {
		return
	}
	if s.live == nil {
		live, ok := s.streamer.StartLive(s.work, s.reply.Conv, s.reply.ReplyTo)
		if !ok {
			s.cannot = true
			return
		}
		s.live = live
	}
	shown := wholeWords(soFar)
	if shown == s.shown || strings.TrimSpace(shown) == "" {
		return
	}
	a := s.reply
	a.Text = shown
	if d := CheckGates(s.ctx, s.gates, a); d.Verdict != Allow {
		s.refused = true
		s.log.Warn().Str("rule", d.Rule).Msg("streamed text refused by gate; live reply no longer updated")
		return
	}
	s.shown = shown
	s.live.Update(s.redact(shown))
}

// Discard implements llm.TextSink: the text shown so far is withdrawn and
// the next text starts a new live reply.
func (s *liveSink) Discard() {
	if s.live != nil {
		s.abandon(retryNote)
	}
	s.refused, s.shown = false, ""
}

// started reports whether a live reply is open.
func (s *liveSink) started() bool { return s != nil && s.live != nil }

// finish ends the live reply with final, the text the gates allowed.
func (s *liveSink) finish(ctx context.Context, final string) error {
	live := s.live
	s.live = nil
	return live.Finish(ctx, s.redact(final))
}

// abandon withdraws the live reply, if one is open, even when the turn's
// context has ended (/cancel): it shows note instead.
func (s *liveSink) abandon(note string) {
	if s == nil || s.live == nil {
		return
	}
	live := s.live
	s.live = nil
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), abandonFor)
	defer cancel()
	live.Abandon(ctx, note)
}

// wholeWords is text up to and including its last whitespace.
func wholeWords(text string) string {
	i := strings.LastIndexFunc(text, unicode.IsSpace)
	if i < 0 {
		return ""
	}
	_, size := utf8.DecodeRuneInString(text[i:])
	return text[:i+size]
}
