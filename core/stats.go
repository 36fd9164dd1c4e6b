package core

import "sync/atomic"

// Stats are the Engine's counters since start.
type Stats struct {
	Signals     uint64
	LLMRequests uint64
	ToolCalls   uint64
	Replies     uint64
	TurnErrors  uint64
}

// counters are the Engine's live counters.
type counters struct {
	signals, llmRequests, toolCalls, replies, turnErrors atomic.Uint64
}

// Stats returns a snapshot of the Engine's counters.
func (e *Engine) Stats() Stats {
	c := &e.counters
	return Stats{
		Signals:     c.signals.Load(),
		LLMRequests: c.llmRequests.Load(),
		ToolCalls:   c.toolCalls.Load(),
		Replies:     c.replies.Load(),
		TurnErrors:  c.turnErrors.Load(),
	}
}
