package core

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/rs/zerolog"
)

// MaxUndoSteps bounds N in "/undo N".
const MaxUndoSteps = 100

// UndoRequest asks to restore the workspace to before Conv's Steps last
// changing tool calls that were not undone yet.
type UndoRequest struct {
	Conv Conversation
	By   Identity
	// Approver is true when By is one of hitl.approvers: only approvers
	// may undo an approved call, or calls of another conversation.
	Approver bool
	Steps    int
}

// Undoer restores the workspace from checkpoints taken before changing
// tool calls (checkpoint implements it). It is reached only by
// people's chat commands (/undo, /checkpoints), never by the LLM.
type Undoer interface {
	// Undo restores the workspace as r asks, or refuses, and audits
	// either. reply is for the person (untrusted parts already escaped);
	// note, when not empty, is what the model is told through the
	// conversation's history.
	Undo(ctx context.Context, r UndoRequest) (reply, note string)
	// CheckpointsText lists conv's last checkpoints for /checkpoints.
	CheckpointsText(ctx context.Context, conv Conversation) string
	// Preflight returns "no checkpoint: …" when the workspace could not be
	// recorded before a runs (over a limit), for its approval request; ""
	// when it could.
	Preflight(ctx context.Context, a Action) string
}

// undoCommands are /help's lines for the Undoer's commands.
var undoCommands = []CommandHelp{
	{Name: "undo", Args: "[N]", Summary: "restore the workspace to before this conversation's last (or N last) changing tool call(s)"},
	{Name: "checkpoints", Summary: "this conversation's last workspace checkpoints"},
}

// undo answers /undo [N] in s's conversation.
func (e *Engine) undo(ctx context.Context, log zerolog.Logger, s Signal) (reply string, escaped bool) {
	steps := 1
	if _, arg := firstWord(s.Text); arg != "" {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 || n > MaxUndoSteps {
			return fmt.Sprintf("Usage: /undo [N] — N from 1 to %d changing tool calls to take back (default 1).", MaxUndoSteps), false
		}
		steps = n
	}
	// A turn that has given its answer is over for the person reading
	// it, and writes nothing more: it does not hold /undo back.
	if e.turns.working(s.Conv.Key()) {
		return "A turn is in progress in this conversation: wait for it to end (or /cancel it), then /undo.", false
	}
	reply, note := e.cfg.Undo.Undo(ctx, UndoRequest{Conv: s.Conv, By: s.From, Approver: e.cfg.Auth.IsApprover(s.From), Steps: steps})
	if note != "" {
		msg := llm.Message{Role: llm.RoleUser, Content: "[gatehouse] " + note}
		if err := e.cfg.History.Append(context.WithoutCancel(ctx), s.Conv.Key(), msg); err != nil {
			log.Error().Err(err).Msg("history note of /undo")
		}
	}
	return reply, true
}
