package core

import "context"

// CommandHelp describes one chat command for /help and for spotting near misses.
type CommandHelp struct {
	Name    string // without the slash: "approve"
	Args    string // "<token> [always]"; may be empty
	Summary string // one line
}

// CommandLister is implemented by a CommandHandler whose commands /help lists.
type CommandLister interface{ Commands() []CommandHelp }

// RunCanceller is implemented by a Holder that runs approved actions:
// CancelRuns cancels conv's running approved actions and returns how many.
type RunCanceller interface{ CancelRuns(conv Conversation) int }

// StatusReporter is implemented by a CommandHandler that adds lines about conv to /status.
type StatusReporter interface {
	StatusLines(ctx context.Context, conv Conversation) []string
}
