package core

import (
	"time"
)

// whoamiGap is how often an unknown sender's /whoami is answered: a
// stranger cannot make the bot send more than one reply a minute.
const whoamiGap = time.Minute

// whoamiCommand is /whoami's line in /help.
var whoamiCommand = CommandHelp{Name: "whoami", Summary: "your identity (gateway:id), as allow lists and hitl.approvers name it"}

// whoami answers /whoami, for anyone, before the allow list: the sender's
// identity and nothing else. Nothing of it is stored or reaches the model.
// An unknown sender is answered at most once per whoamiGap (and not at
// all under a flood of them, as the allow list's refusal). It reports
// whether s was /whoami (its Done then called).
func (e *Engine) whoami(s Signal) (handled bool, err error) {
	if s.Kind != KindMessage || s.From == "" || commandName(s.Text) != whoamiCommand.Name {
		return false, nil
	}
	if err := e.queues.begin(); err != nil {
		return false, err
	}
	defer e.queues.finish()
	defer e.done(s)
	e.counters.signals.Add(1)
	log := e.log.With().Str("conv", s.Conv.Key()).Logger()
	if !e.cfg.Auth.Allowed(s) && !e.cfg.Auth.mayTell(e.cfg.Auth.whoTold, whoamiGap, s.From, e.cfg.Now()) {
		log.Info().Str("from", string(s.From)).Msg("/whoami from a sender not on the allow list, answered recently: not answered again")
		return true, nil
	}
	log.Info().Str("command", whoamiCommand.Name).Msg("command")
	e.tell(e.work, log, s, "Your identity is "+string(s.From)+".")
	return true, nil
}
