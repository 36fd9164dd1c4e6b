package core

import (
	"context"
	"runtime/debug"
)

// GuestCommandHandler is a CommandHandler that also answers a few
// commands of senders the allow list refuses: the hitl broker answers an
// escalation approver's /approve, /deny and /show, and judges each by
// the one request escalated to them. Everything else such a sender
// writes stays a stranger's message.
type GuestCommandHandler interface {
	// HandleGuestCommand reports whether s, from a sender the allow list
	// refused, is a command the handler answers for that sender, and if
	// so answers it (replying through the Dispatcher). It must not
	// reveal to a sender it does not admit whether a command would have
	// meant anything.
	HandleGuestCommand(ctx context.Context, s Signal) bool
}

// guestPath hands a message the allow list refused to the
// GuestCommandHandler, before the queue, and reports whether it was
// answered there (its Done then called). A message it does not answer
// goes on as a stranger's: refused in Perceive.
func (e *Engine) guestPath(s Signal) (handled bool, err error) {
	g, ok := e.cfg.Commands.(GuestCommandHandler)
	if !ok || s.Kind != KindMessage || len(s.Text) > e.cfg.MaxMessage {
		return false, nil
	}
	if err := e.queues.begin(); err != nil {
		return false, err
	}
	defer e.queues.finish()
	defer func() {
		if r := recover(); r != nil {
			e.log.Error().Interface("panic", r).Bytes("stack", debug.Stack()).Str("conv", s.Conv.Key()).Msg("guest command panicked")
			handled = false
		}
		if handled {
			e.done(s)
		}
	}()
	if !g.HandleGuestCommand(e.work, s) {
		return false, nil
	}
	e.counters.signals.Add(1)
	e.log.Info().Str("conv", s.Conv.Key()).Str("from", string(s.From)).Msg("command of a sender off the allow list handled (escalation)")
	return true, nil
}
