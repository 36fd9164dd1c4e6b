package core

import (
	"context"
	"fmt"
	"runtime/debug"
)

// Prompt sends an approval request to conv: with buttons through
// PromptApproval when conv's gateway is an ApprovalPrompter, else as a
// plain reply of p.WithHint(text) (also when p.NoButtons). Secrets are redacted from the text, the
// hint and the summary; a panicking gateway is recovered and logged, like
// in Act. It implements Dispatcher for the hitl broker.
func (e *Engine) Prompt(ctx context.Context, conv Conversation, text string, p ApprovalPrompt) (err error) {
	text = e.cfg.Redact(text)
	p.Summary, p.Hint = e.cfg.Redact(p.Summary), e.cfg.Redact(p.Hint)
	act, ok := e.actuators.Get(conv.Gateway)
	if !ok {
		return fmt.Errorf("core: no actuator %q for %s", conv.Gateway, conv.Key())
	}
	pr, ok := act.(ApprovalPrompter)
	if !ok || p.NoButtons {
		_, err := e.Act(ctx, Action{Kind: ActionReply, Conv: conv, Text: p.WithHint(text), Escaped: true})
		return err
	}
	defer e.recoverGateway(conv, "approval prompt", &err)
	if err := pr.PromptApproval(ctx, conv, text, p); err != nil {
		return fmt.Errorf("core: %s approval prompt: %w", conv.Gateway, err)
	}
	return nil
}

// PromptRoom is how many runes an approval request to conv may take to
// show as one message (PromptSizer; DefaultPromptRoom when its gateway
// does not say, 0 when it shows any length whole). It implements
// PromptFiles for the hitl broker.
func (e *Engine) PromptRoom(conv Conversation) int {
	act, ok := e.actuators.Get(conv.Gateway)
	if !ok {
		return DefaultPromptRoom
	}
	if s, ok := act.(PromptSizer); ok {
		return max(s.PromptRoom(), 0)
	}
	return DefaultPromptRoom
}

// SendPromptFile sends f, the whole call of an approval request, to conv
// through its gateway's FileSender, its content and caption redacted of
// secrets like the request. A gateway that cannot send files, or a file
// over its MaxFileBytes, is an error; a panicking gateway is recovered.
// It implements PromptFiles for the hitl broker.
func (e *Engine) SendPromptFile(ctx context.Context, conv Conversation, f OutgoingFile) (err error) {
	fs, ok := e.actuators.FileSender(conv.Gateway)
	if !ok {
		return fmt.Errorf("core: %s cannot send files", conv.Gateway)
	}
	f.Data = []byte(e.cfg.Redact(string(f.Data)))
	f.Caption = e.cfg.Redact(f.Caption)
	if max := fs.MaxFileBytes(); max > 0 && int64(len(f.Data)) > max {
		return fmt.Errorf("core: %s: %d bytes, over the %d the platform takes", conv.Gateway, len(f.Data), max)
	}
	defer e.recoverGateway(conv, "approval file", &err)
	if err := fs.SendFile(ctx, conv, f); err != nil {
		return fmt.Errorf("core: %s approval file: %w", conv.Gateway, err)
	}
	return nil
}

var _ PromptFiles = (*Engine)(nil)

// Resolved tells conv's gateway that an approval was resolved: an
// ApprovalUpdater updates its request messages in place; any other
// gateway is left alone. A panicking gateway is recovered and logged. The
// resolution holds no free text, so there is nothing to redact. It
// implements Dispatcher for the hitl broker.
func (e *Engine) Resolved(ctx context.Context, conv Conversation, r ApprovalResolution) {
	act, ok := e.actuators.Get(conv.Gateway)
	if !ok {
		return
	}
	up, ok := act.(ApprovalUpdater)
	if !ok {
		return
	}
	var panicked error // logged by recoverGateway; nobody to return it to
	defer e.recoverGateway(conv, "approval update", &panicked)
	up.UpdateApproval(ctx, r)
}

// recoverGateway, deferred around a call into conv's gateway, turns a
// panic into a logged error in *err: one faulty adapter must not take the
// process down.
func (e *Engine) recoverGateway(conv Conversation, what string, err *error) {
	r := recover()
	if r == nil {
		return
	}
	e.log.Error().Interface("panic", r).Bytes("stack", debug.Stack()).Str("actuator", conv.Gateway).
		Str("conv", conv.Key()).Msg("actuator panicked")
	*err = fmt.Errorf("core: %s %s panicked: %v", conv.Gateway, what, r)
}
