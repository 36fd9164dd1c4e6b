package core

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// maxRejections bounds how often the gates may turn down the LLM's proposals
// in one step before the turn gives up.
const maxRejections = 3

// handle runs one signal: Perceive, then a turn of Reason → Act. It never
// lets a panic escape: the panic is logged with its stack and the user is
// told something went wrong. rt is the turn's record in e.turns: every
// history write of the turn goes through it.
func (e *Engine) handle(ctx context.Context, rt *runningTurn, s Signal) {
	log := e.log.With().Str("conv", s.Conv.Key()).Logger()
	defer func() {
		if r := recover(); r != nil {
			log.Error().Interface("panic", r).Bytes("stack", debug.Stack()).Msg("turn panicked")
			e.tell(ctx, log, s, "Sorry, something went wrong on my side (internal error). Please try again.")
		}
	}()
	e.counters.signals.Add(1)
	log.Info().Stringer("kind", s.Kind).Str("from", string(s.From)).Msg("signal")
	if e.resumed(ctx, log, rt, s) {
		return
	}
	text, ok := e.perceive(ctx, log, s)
	if !ok {
		return
	}
	var images []llm.Image
	if s.Kind == KindMessage && len(s.Attachments) > 0 {
		// A turn the budget refuses fetches nothing: a download and a
		// transcription (a paid API call) would be spent on a refusal.
		if c, over := e.budgetReached(ctx, log, s); over {
			e.refuseOverBudget(ctx, log, s, c)
			return
		}
		if text, images, ok = e.receive(ctx, log, s, text); !ok {
			return
		}
	}
	e.turn(ctx, log, rt, s, text, images)
}

// noAttachments answers files when no AttachmentReceiver is configured.
const noAttachments = "Sorry, I can't take files here: attachments are not set up."

// receive has the AttachmentReceiver take in an authorised message's
// attachments (fetch, save, describe) and adds what arrived to the text
// the model sees; the user is told of refusals, failures and transcripts
// first. It reports whether there is anything left for a turn: the
// message's own text is handled even when every file failed.
func (e *Engine) receive(ctx context.Context, log zerolog.Logger, s Signal, text string) (string, []llm.Image, bool) {
	if e.cfg.Attachments == nil {
		e.tell(ctx, log, s, noAttachments)
		return text, nil, text != ""
	}
	r := e.cfg.Attachments.Receive(ctx, s)
	log.Info().Int("attachments", len(s.Attachments)).Int("images", len(r.Images)).Int("notes", len(r.Notes)).Msg("attachments received")
	if len(r.Notes) > 0 {
		e.tell(ctx, log, s, strings.Join(r.Notes, "\n\n"))
	}
	if r.Text = e.cfg.Redact(r.Text); r.Text != "" {
		if text != "" {
			text += "\n\n"
		}
		text += r.Text
	}
	return text, r.Images, strings.TrimSpace(text) != ""
}

// perceive checks who is talking and routes commands to the broker. It
// returns the text the LLM is to see and whether a turn should run.
func (e *Engine) perceive(ctx context.Context, log zerolog.Logger, s Signal) (string, bool) {
	switch s.Kind {
	case KindMessage:
		if !e.cfg.Auth.Allowed(s) && !e.pairedElsewhere(ctx, log, s) {
			log.Warn().Str("from", string(s.From)).Msg("message from a sender not on the allow list")
			if msg := e.strangerReply(ctx, log, s); msg != "" {
				e.tell(ctx, log, s, msg)
			}
			return "", false
		}
		// Commands and oversized messages were answered in Submit. The
		// text is redacted before the history keeps it: a pasted secret
		// is neither stored nor sent.
		return e.cfg.Redact(s.Text), s.Text != "" || len(s.Attachments) > 0
	case KindApprovalOutcome:
		return e.cfg.Redact(s.Text), true
	case KindError:
		log.Error().Str("error", s.Text).Msg("loop error")
	}
	return "", false
}

// turn appends the user's text to the history and loops Reason → Act until
// the LLM replies, the step limit is reached, or a step fails for good.
// images go with the user's message to a provider with vision in this
// turn's requests only; the history keeps text. /reset stops it, and
// nothing it would still write is stored.
func (e *Engine) turn(ctx context.Context, log zerolog.Logger, rt *runningTurn, s Signal, text string, images []llm.Image) {
	key := s.Conv.Key()
	t := turnState{Engine: e, log: log, sig: s, key: key, rt: rt, text: text, images: images,
		profile: e.cfg.Profiles.For(s.Conv)}
	if t.profile != nil {
		t.log = log.With().Str("profile", t.profile.Name).Logger()
	}
	if c, over := e.budgetReached(ctx, log, s); over {
		if s.Kind == KindApprovalOutcome {
			// The outcome happened: the model learns of it in the next turn.
			if err := t.append(ctx, llm.Message{Role: llm.RoleUser, Content: text}); err != nil {
				log.Error().Err(err).Msg("history append")
			}
		}
		e.refuseOverBudget(ctx, log, s, c)
		return
	}
	if typer, ok := e.typer(s.Conv); ok && s.Kind == KindMessage {
		t.typing = startTypingAfter(ctx, typer, s.Conv, e.cfg.TypingDelay)
		defer t.typing.end()
	}
	if s.journal.stage() < StageInHistory { // a takeover's history has it already
		if err := t.append(ctx, llm.Message{Role: llm.RoleUser, Content: text}); err != nil {
			// Without it the model would answer the history as it was:
			// the previous message again.
			e.counters.turnErrors.Add(1)
			e.cfg.Metrics.TurnError()
			log.Error().Err(err).Msg("history append: the message was not stored; turn not run")
			e.tell(ctx, log, s, notStored(s, err))
			return
		}
		if err := s.journal.record(ctx, StageInHistory); err != nil {
			log.Warn().Err(err).Msg("turn left to the instance that takes it over")
			return
		}
	}
	defer func() { t.live.abandon(withdrawnNote) }() // a panic or an early return never leaves one open
	for step := 0; ; step++ {
		if step == e.cfg.MaxSteps {
			log.Warn().Int("max_steps", e.cfg.MaxSteps).Msg("step limit reached")
			e.tell(ctx, log, s, fmt.Sprintf("I stopped after %d steps (the step limit, llm.max_steps) without finishing. Ask me to continue if you want me to go on.", e.cfg.MaxSteps))
			return
		}
		done, err := t.step(ctx)
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, errReset):
			// /reset answered; what the turn did is forgotten with the rest.
			log.Info().Msg("turn stopped by /reset")
			return
		case errors.Is(cause, errUserCancelled):
			t.cancelled(ctx)
			return
		case errors.Is(cause, errJournal) || errors.Is(err, errJournal):
			// Its claim was lost or the store is unreachable: the
			// instance that takes the message over finishes it.
			log.Warn().Err(err).Msg("turn left to the instance that takes it over")
			return
		}
		if err != nil && e.work.Err() != nil {
			// Shutdown cut the turn after its grace period: expected, and
			// nobody can be told any more (the gateways are stopping).
			log.Info().Err(err).Int("step", step).Msg("turn cut short by shutdown")
			return
		}
		if err != nil {
			e.counters.turnErrors.Add(1)
			e.cfg.Metrics.TurnError()
			log.Error().Err(err).Int("step", step).Msg("turn failed")
			e.tell(ctx, log, s, "Sorry, I couldn't finish that: "+userError(err))
			return
		}
		if done {
			return
		}
	}
}

// cancelNote tells the model, in the history, that the user stopped a turn.
const cancelNote = "[gatehouse] The user stopped this turn with /cancel: its running tool calls were cancelled " +
	"and their results may be missing or incomplete. Do not resume it unless the user asks."

// cancelled ends a turn stopped by /cancel: the model is told in a history
// note; the user already got /cancel's answer.
func (t *turnState) cancelled(ctx context.Context) {
	t.log.Info().Msg("turn cancelled by /cancel")
	note := llm.Message{Role: llm.RoleUser, Content: cancelNote}
	if err := t.append(context.WithoutCancel(ctx), note); err != nil {
		t.log.Error().Err(err).Msg("history append")
	}
}

// append adds msgs to the turn's conversation's history, unless /reset
// forgot that history since the turn began.
func (t *turnState) append(ctx context.Context, msgs ...llm.Message) error {
	// A journaled turn's rows name its message (JournalEntry): a shared
	// store reads from them how far the turn got.
	ctx = t.sig.journal.entry(ctx)
	return t.rt.write(func() error { return t.cfg.History.Append(ctx, t.key, msgs...) })
}

// turnState carries one turn's bookkeeping across steps.
type turnState struct {
	*Engine
	log        zerolog.Logger
	sig        Signal
	key        string
	rt         *runningTurn // its history writes go through rt.write
	text       string       // the user's message as the history keeps it
	images     []llm.Image  // sent with text to a provider with vision
	failures   int          // consecutive steps whose tool calls all failed
	rejections int          // proposals the gates turned down in this step
	shortened  bool         // the history was shortened once after "context too long"
	live       *liveSink    // the last request's live reply; nil when the gateway has none
	profile    *Profile     // the conversation's, as the turn began; nil when none
	typing     *typing      // nil without a typing indicator
}

// Errors that end a turn; the user is told in plain words (userError).
var (
	// errGiveUp ends a turn whose failures were already explained to the LLM once.
	errGiveUp = errors.New("the tools kept failing")
	// errEmptyAnswer: the model answered with neither text nor a tool call
	// (a length cut-off, a content filter, a confused local model).
	errEmptyAnswer = errors.New("the language model returned an empty answer")
	// errRefused ends a turn whose proposals the gates kept refusing.
	errRefused = errors.New("the policy refused my proposals")
	// errContextFull: the model found the conversation too long even after
	// its older half was dropped.
	errContextFull = errors.New("this conversation is too long for the language model, even after I dropped its older messages. Send /reset to start afresh")
)

// step asks the LLM once and acts on its answer. It reports whether the turn
// is over.
func (t *turnState) step(ctx context.Context) (done bool, err error) {
	resp, err := t.reason(ctx)
	if errors.Is(err, llm.ErrContextTooLong) {
		resp, err = t.reasonShorter(ctx, err)
	}
	if err != nil {
		t.live.abandon(withdrawnNote)
		return true, err
	}
	msg := resp.Message
	if len(msg.ToolCalls) == 0 {
		return t.reply(ctx, msg)
	}
	t.finishBeforeCalls(ctx, msg.Content)
	for i := range msg.ToolCalls {
		msg.ToolCalls[i].Args = CanonicalArgs(msg.ToolCalls[i].Args)
	}
	results, allFailed := t.runCalls(ctx, msg.ToolCalls)
	t.redactForHistory(&msg)
	// The calls ran: record them even when the turn is being cancelled.
	if err := t.append(context.WithoutCancel(ctx), append([]llm.Message{msg}, results...)...); err != nil {
		return true, fmt.Errorf("history append: %w", err)
	}
	if err := t.sig.journal.record(ctx, StageInHistory); err != nil {
		return true, err
	}
	if t.rejections >= maxRejections {
		return true, fmt.Errorf("%w %d times in a row", errRefused, t.rejections)
	}
	if allFailed {
		t.failures++
		if t.failures > 1 {
			return true, fmt.Errorf("%w: %s", errGiveUp, firstLine(results[len(results)-1].Content))
		}
	} else {
		t.failures = 0
	}
	return false, nil
}

// redactForHistory removes secrets from an assistant message before the
// history keeps it: the history goes to the provider again (and to the next
// one in a cascade) and into the store. The gates have already seen the
// original.
func (t *turnState) redactForHistory(msg *llm.Message) {
	msg.Content = t.cfg.Redact(msg.Content)
	for i := range msg.ToolCalls {
		msg.ToolCalls[i].Args = t.cfg.Redact(msg.ToolCalls[i].Args)
	}
}

// reason asks the provider for the next assistant message over the history.
func (t *turnState) reason(ctx context.Context) (llm.Response, error) {
	hist, err := t.cfg.History.Load(ctx, t.key)
	if err != nil {
		return llm.Response{}, fmt.Errorf("history load: %w", err)
	}
	msgs := make([]llm.Message, 0, len(hist)+1)
	prompt, provider := t.cfg.SystemPrompt, t.cfg.Provider
	if p := t.profile; p != nil && p.SystemPrompt != "" {
		prompt = p.SystemPrompt
	}
	if p := t.profile; p != nil && p.Provider != nil {
		provider = p.Provider
	}
	prompt, specs := t.withSkills(ctx, prompt, t.profile.offered(t.cfg.Tools.Specs()))
	msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: prompt})
	msgs = append(msgs, hist...)
	t.attachImages(msgs)
	t.counters.llmRequests.Add(1)
	req := llm.Request{Messages: msgs, Tools: specs}
	t.live.abandon(withdrawnNote) // an earlier request's, never left open
	t.live = t.newLiveSink(ctx)
	if t.live != nil {
		req.Sink = t.live
	}
	resp, err := provider.Complete(ctx, req)
	if err != nil {
		return resp, fmt.Errorf("llm: %w", err)
	}
	t.log.Debug().Str("provider", resp.Provider).Int("prompt_tokens", resp.Usage.PromptTokens).
		Int("tool_calls", len(resp.Message.ToolCalls)).Msg("reasoned")
	if t.cfg.Usage != nil {
		// The tokens are spent: record them even when the turn is being
		// cancelled, or the budget would not count them.
		if err := t.cfg.Usage.AddUsage(context.WithoutCancel(ctx), t.key, resp.Usage); err != nil {
			t.log.Warn().Err(err).Msg("usage not recorded")
		}
	}
	return resp, nil
}

// attachImages puts the turn's images on its user message in msgs, a
// loaded copy of the history (the stored history never holds them): the
// last user message with the turn's text. Once the history has dropped it,
// the images are not sent.
func (t *turnState) attachImages(msgs []llm.Message) {
	if len(t.images) == 0 {
		return
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser && msgs[i].Content == t.text {
			msgs[i].Images = t.images
			return
		}
	}
}

// reasonShorter handles a model that found the conversation too long
// (cause): once a turn, it drops the oldest turns until the history is at
// most half its size — llm.Trim never leaves a tool call without its
// results — and asks again. When nothing can be dropped, or the model
// refuses again, the turn ends with errContextFull (the user is told to
// /reset).
func (t *turnState) reasonShorter(ctx context.Context, cause error) (llm.Response, error) {
	if t.shortened {
		return llm.Response{}, fmt.Errorf("%w: %w", errContextFull, cause)
	}
	t.shortened = true
	hist, err := t.cfg.History.Load(ctx, t.key)
	if err != nil {
		return llm.Response{}, fmt.Errorf("history load: %w", err)
	}
	kept := llm.Trim(hist, len(hist)/2)
	if len(kept) == len(hist) {
		return llm.Response{}, fmt.Errorf("%w: %w", errContextFull, cause)
	}
	if err := t.rt.write(func() error { return t.cfg.History.Replace(ctx, t.key, kept) }); err != nil {
		return llm.Response{}, fmt.Errorf("history replace: %w", err)
	}
	t.log.Warn().Int("before", len(hist)).Int("after", len(kept)).Msg("context too long: older messages dropped, asking again")
	resp, err := t.reason(ctx)
	if errors.Is(err, llm.ErrContextTooLong) {
		return resp, fmt.Errorf("%w: %w", errContextFull, err)
	}
	return resp, err
}

// reply gates the LLM's text answer and sends it. A denied reply goes back
// to the LLM with the reason, at most maxRejections times.
func (t *turnState) reply(ctx context.Context, msg llm.Message) (done bool, err error) {
	if strings.TrimSpace(msg.Content) == "" {
		return true, errEmptyAnswer
	}
	a := Action{Kind: ActionReply, Conv: t.sig.Conv, From: t.sig.From, Text: msg.Content, ReplyTo: t.sig.MessageID}
	t.redactForHistory(&msg)
	if d := CheckGates(ctx, t.cfg.Gates, a); d.Verdict != Allow {
		t.live.abandon(withdrawnNote) // the refused text must not stay shown
		t.rejections++
		t.log.Warn().Str("rule", d.Rule).Int("rejections", t.rejections).Msg("reply refused by gate")
		if t.rejections >= maxRejections {
			return true, fmt.Errorf("%w %d times in a row (%s)", errRefused, t.rejections, d.Rule)
		}
		note := llm.Message{Role: llm.RoleUser, Content: "[gatehouse] Your reply was not sent: " + d.Reason}
		return false, t.append(ctx, msg, note)
	}
	t.typing.decided()
	if err := t.append(ctx, msg); err != nil {
		t.log.Error().Err(err).Msg("history append")
	}
	// Nothing more of the turn is written or run: from here the person
	// may be reading its answer, and an /undo must not be told that a
	// turn is in progress.
	t.rt.answer()
	if err := t.sig.journal.recordReply(ctx, t.cfg.Redact(a.Text)); err != nil {
		t.live.abandon(withdrawnNote)
		return true, err // not sent: the instance that takes it over answers
	}
	t.send(t.sig.journal.entry(ctx), a)
	return true, nil
}

// send delivers a reply, logging a failure with the conversation key: it
// finishes the live reply showing it, if one is open, or sends it by Act.
func (t *turnState) send(ctx context.Context, a Action) {
	t.counters.replies.Add(1)
	t.log.Info().Stringer("action", a.Kind).Int("len", len(a.Text)).Bool("live", t.live.started()).Msg("act")
	var err error
	if t.live.started() {
		err = t.live.finish(ctx, a.Text)
	} else {
		_, err = t.Act(ctx, a)
	}
	if err != nil {
		t.log.Error().Err(err).Msg("reply not delivered")
		return
	}
	t.cfg.Metrics.ReplySent(a.Conv.Gateway)
}

// finishBeforeCalls ends the live reply that showed the text the model
// wrote before its tool calls: finalised as it stands when the gates allow
// it (what it said stays said), withdrawn otherwise. Without a live reply
// that text is not sent, as before streaming.
func (t *turnState) finishBeforeCalls(ctx context.Context, text string) {
	if !t.live.started() {
		return
	}
	a := Action{Kind: ActionReply, Conv: t.sig.Conv, From: t.sig.From, Text: text, ReplyTo: t.sig.MessageID}
	if strings.TrimSpace(text) == "" || CheckGates(ctx, t.cfg.Gates, a).Verdict != Allow {
		t.live.abandon(withdrawnNote)
		return
	}
	if err := t.live.finish(ctx, text); err != nil {
		t.log.Error().Err(err).Msg("text before tool calls not delivered")
	}
}

// tell sends the core's own short message to the signal's conversation.
func (e *Engine) tell(ctx context.Context, log zerolog.Logger, s Signal, text string) {
	a := Action{Kind: ActionReply, Conv: s.Conv, From: s.From, Text: text, ReplyTo: s.MessageID}
	if _, err := e.Act(ctx, a); err != nil {
		log.Error().Err(err).Msg("reply not delivered")
	}
}

func (e *Engine) typer(c Conversation) (Typer, bool) {
	a, ok := e.actuators.Get(c.Gateway)
	if !ok {
		return nil, false
	}
	t, ok := a.(Typer)
	return t, ok
}

// userError says in plain words why a turn failed. Errors of our own making
// (tool failures, refusals) are shown; infrastructure errors are classified,
// never shown raw: they can name internal hosts, resolvers or key fragments
// that have no place in a group chat. The log has the detail.
func userError(err error) string {
	switch {
	case errors.Is(err, errGiveUp), errors.Is(err, errRefused), errors.Is(err, errEmptyAnswer), errors.Is(err, errContextFull):
		return firstLine(err.Error())
	case errors.Is(err, ErrUnavailable):
		return "I'm temporarily unavailable (my database does not answer); try again in a moment."
	}
	switch llm.ErrorClass(err) {
	case "timeout":
		return "the language model took too long to answer."
	case "rate_limited":
		return "the language model is rate-limited right now; try again in a minute."
	case "server_error", "transport":
		return "the language model is unreachable right now; try again later."
	case "client_error", "bad_response":
		return "the language model rejected the request (the bot's log has the details)."
	}
	return "an internal error (the bot's log has the details)."
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			s = s[:i]
			break
		}
	}
	return textutil.Shorten(s, 300)
}
