package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// TurnStage is how far the turn of a journaled message got, recorded as
// it goes so that an instance taking the message over after its first
// runner died knows what is already done.
type TurnStage int

// The stages of a journaled message's turn, in order.
const (
	// StageReceived: nothing of the turn is done; a takeover runs it.
	StageReceived TurnStage = iota
	// StageInHistory: the user's message is in the history (and any tool
	// calls that ran with their results); a takeover runs the turn on
	// without adding the message again.
	StageInHistory
	// StageTool: a tool call was running; a takeover never runs it again:
	// it tells the conversation the turn was interrupted.
	StageTool
	// StageReplied: the final reply was recorded (its text with the
	// stage) and handed to the gateway; a takeover hands the recorded
	// text over again, and the gateways' outbox sends it only if it does
	// not have it already (one reply per message, JournalEntry).
	StageReplied
)

// Journal keeps received messages durably, so that any instance sharing
// the store may run their turns, one at a time and in order per
// conversation (cluster, on a shared store; without a Journal
// every message takes the in-memory queue).
type Journal interface {
	// Put writes s durably before it is acknowledged and reports whether
	// it took s; false leaves s to the Engine's in-memory queue. A message
	// delivered again is taken and not written twice. An error, when the
	// store cannot take s now, wraps ErrUnavailable.
	Put(ctx context.Context, s Signal) (bool, error)
}

// JournalCanceller is a Journal that can stop a conversation's turn
// running on another instance: /cancel typed to this one asks it when no
// turn of the conversation runs here.
type JournalCanceller interface {
	// CancelElsewhere asks the instance running conv's turn to stop it
	// and reports whether one was running.
	CancelElsewhere(ctx context.Context, conv Conversation) (bool, error)
}

// CancelTurn stops conv's turn in progress on this instance and its
// running tool calls, as /cancel does, and reports whether there was one:
// what an instance does when /cancel reached another one
// (JournalCanceller).
func (e *Engine) CancelTurn(conv Conversation) bool {
	return e.turns.cancel(conv.Key())
}

// JournalResetter is a Journal that makes /reset hold across the
// instances sharing its store: the store holds the history too.
type JournalResetter interface {
	// ResetShared forgets conv's history and asks the other instances
	// running conv's turn at that moment to stop it keeping nothing of it
	// (they call ForgetTurn), and reports whether it asked one (stopped).
	// It reports shared false, having done nothing, when conv is not the
	// journal's: the caller resets the history itself.
	ResetShared(ctx context.Context, conv Conversation) (shared, stopped bool, err error)
}

// ForgetTurn does on this instance what /reset does to conv's turn in
// progress: it forgets conv's history and stops the turn, whose later
// writes are dropped, and reports whether there was a turn: what an
// instance does when /reset reached another one (JournalResetter). With
// no turn here it only forgets the history.
func (e *Engine) ForgetTurn(ctx context.Context, conv Conversation) (bool, error) {
	return e.turns.forget(conv.Key(), func() error { return e.cfg.History.Reset(ctx, conv.Key()) })
}

// Journaled is a journaled message claimed for its turn on this instance.
type Journaled struct {
	// Signal is the message as it was put; its Attachments are those
	// this instance still holds.
	Signal Signal
	// Stage is how far an earlier run of the turn got.
	Stage TurnStage
	// FilesLost counts files sent with the message that this instance
	// does not hold (another instance received them and stopped); the
	// model is told they could not be carried over.
	FilesLost int
	// Record records a stage the turn reached. An error (the claim was
	// lost to another instance, or the store is unreachable) stops the
	// turn before it runs a tool or sends its reply: the instance that
	// takes the message over finishes it.
	Record func(ctx context.Context, st TurnStage) error
	// ID is the journal's id of the message: the reply is handed to the
	// gateway with a context carrying it (JournalEntry), so that the
	// gateways' outbox writes one reply per message across instances.
	ID int64
	// Reply is the reply an earlier run recorded with StageReplied: a
	// takeover at that stage hands it to the gateway again, whose outbox
	// sends it only if the earlier run did not write it (it may have died
	// in between). "" hands nothing over.
	Reply string
	// RecordReply records StageReplied with the reply's text, as Record
	// does; nil records the stage alone with Record.
	RecordReply func(ctx context.Context, text string) error
}

// entryKey is the context key of WithJournalEntry.
type entryKey struct{}

// WithJournalEntry returns ctx carrying id, the journal's id of the
// message a reply answers.
func WithJournalEntry(ctx context.Context, id int64) context.Context {
	return context.WithValue(ctx, entryKey{}, id)
}

// JournalEntry returns the journal's id of the message whose reply is
// handed over with ctx, if it is one's (the gateway's outbox links the
// reply to it).
func JournalEntry(ctx context.Context) (int64, bool) {
	id, ok := ctx.Value(entryKey{}).(int64)
	return id, ok && id != 0
}

// errJournal is the cause of a turn stopped because its stage could not
// be recorded: another instance finishes it, so nobody is told here.
var errJournal = errors.New("turn stage not recorded")

// journal is a journaled turn on its way through the queue.
type journal struct {
	Journaled
	from TurnStage     // the stage it was claimed at
	done chan struct{} // closed once the turn is over or dropped
	ran  bool          // set before done is closed
}

// stage is how far an earlier run got; StageReceived for a signal that
// is not journaled.
func (j *journal) stage() TurnStage {
	if j == nil {
		return StageReceived
	}
	return j.Stage
}

// record records st for a journaled turn; a signal that is not journaled
// records nothing.
func (j *journal) record(ctx context.Context, st TurnStage) error {
	if j == nil || j.Record == nil {
		return nil
	}
	if err := j.Record(context.WithoutCancel(ctx), st); err != nil {
		return fmt.Errorf("%w: %w", errJournal, err)
	}
	j.Stage = st
	return nil
}

// recordReply records StageReplied with the reply's text for a journaled
// turn; a signal that is not journaled records nothing.
func (j *journal) recordReply(ctx context.Context, text string) error {
	if j == nil || j.RecordReply == nil {
		return j.record(ctx, StageReplied)
	}
	if err := j.RecordReply(context.WithoutCancel(ctx), text); err != nil {
		return fmt.Errorf("%w: %w", errJournal, err)
	}
	j.Stage = StageReplied
	return nil
}

// entry returns ctx carrying the journal's id of the message, if it is a
// journaled one's.
func (j *journal) entry(ctx context.Context) context.Context {
	if j == nil || j.ID == 0 {
		return ctx
	}
	return WithJournalEntry(ctx, j.ID)
}

// takenOver reports whether the turn was taken over after an earlier run
// put the user's message in the history; nil-safe.
func (j *journal) takenOver() bool {
	return j != nil && j.from >= StageInHistory
}

// end reports the turn over; nil-safe.
func (j *journal) end(ran bool) {
	if j != nil {
		j.ran = ran
		close(j.done)
	}
}

// filesLostNote is added to a journaled message whose files stayed with
// the instance that received them.
const filesLostNote = "[gatehouse] The user sent %d file(s) with this message, but the instance that received them " +
	"stopped before this turn ran and they could not be carried over: you cannot see them. Tell the user to send them again."

// RunJournaled runs the turn of j in its conversation's order on this
// instance, waiting for it, and reports whether it ran: false when the
// Engine stopped before it began (the caller gives the message back for
// another instance). It fails only when ctx ends first.
func (e *Engine) RunJournaled(ctx context.Context, j Journaled) (bool, error) {
	select {
	case <-e.started:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	s := j.Signal
	s.Done = nil // the message was acknowledged when it was put
	if j.FilesLost > 0 {
		if s.Text != "" {
			s.Text += "\n\n"
		}
		s.Text += fmt.Sprintf(filesLostNote, j.FilesLost)
	}
	jr := &journal{Journaled: j, from: j.Stage, done: make(chan struct{})}
	s.journal = jr
	start, err := e.queues.push(ctx, s.Conv.Key(), s)
	if errors.Is(err, ErrStopped) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("core: run journaled message of %s: %w", s.Conv.Key(), err)
	}
	if start {
		e.ready(s.Conv.Key())
	}
	select {
	case <-jr.done:
		return jr.ran, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// journalTakes reports whether s goes to the Journal: messages from
// people on the allow list (a stranger's are refused from memory and
// never written); a scheduled run and the core's own signals stay here.
func (e *Engine) journalTakes(s Signal) bool {
	return e.cfg.Journal != nil && s.Kind == KindMessage && s.Schedule == "" && s.Webhook == "" && e.cfg.Auth.Allowed(s)
}

// resumed handles a journaled turn that an earlier run took past its
// start, and reports whether nothing is left to run: a reply handed over
// is not sent again; a tool call that was running is never run again, the
// conversation is told it was interrupted.
func (e *Engine) resumed(ctx context.Context, log zerolog.Logger, rt *runningTurn, s Signal) bool {
	switch s.journal.stage() {
	case StageReplied:
		if s.journal.Reply == "" {
			log.Info().Msg("taken over after its reply was handed over: not sent again")
			return true
		}
		// The earlier run may have died before its outbox had the reply:
		// handed over again, it is sent unless that outbox row exists
		// (then the outbox sends it, once).
		log.Info().Msg("taken over after its reply was recorded: handed over again, sent unless already in the outbox")
		a := Action{Kind: ActionReply, Conv: s.Conv, From: s.From, Text: s.journal.Reply, ReplyTo: s.MessageID}
		if _, err := e.Act(s.journal.entry(ctx), a); err != nil {
			log.Error().Err(err).Msg("reply not delivered")
		}
		return true
	case StageTool:
		log.Warn().Msg("taken over while a tool call ran: the call is not run again; reported as interrupted")
		note := llm.Message{Role: llm.RoleUser, Content: interruptedNote}
		if err := rt.write(func() error { return e.cfg.History.Append(ctx, s.Conv.Key(), note) }); err != nil {
			log.Error().Err(err).Msg("history append")
		}
		e.tell(ctx, log, s, interruptedReply)
		return true
	}
	return false
}

// interruptedNote and interruptedReply tell the model and the person that
// a turn's instance stopped while a tool call ran.
const (
	interruptedNote = "[gatehouse] The turn answering the message above was interrupted while a tool call ran " +
		"(the instance running it stopped). The call was not run again and its result is unknown; it may or may not have taken effect."
	interruptedReply = "Your previous message was being worked on when the instance running it stopped, in the middle of a tool call. " +
		"That call was interrupted and not run again; its result is unknown. Ask again if it is still needed."
)
