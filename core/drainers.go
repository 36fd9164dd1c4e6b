package core

// drainers: the goroutines that drain conversations' queues are reused.
//
// A burst spread over many conversations (the bench's: 1000 messages over
// 100 chats, one message of each chat per batch of updates) found each
// queue empty after its one message, so every message started a goroutine
// of its own, whose stack then grew in steps (copied each time) to the
// depth of SQLite's calls: runtime.newstack was 5 % of the bot's CPU. A
// drainer that has emptied its queue now waits for another conversation to
// drain, while it is one of at most Config.Concurrency idle ones, until the
// engine's work ends.

// startDrain has key's conversation drained by an idle drainer, or by a
// new one when none is waiting.
func (e *Engine) startDrain(key string) {
	select {
	case e.handoff <- key:
	default:
		go e.drainer(key)
	}
}

// drainer drains key's conversation, then the conversations handed to it
// while it waits idle; it ends when more than Config.Concurrency drainers
// would be idle, or once the engine's work context ends.
func (e *Engine) drainer(key string) {
	for {
		e.drain(key)
		if e.idleDrainers.Add(1) > int32(e.cfg.Concurrency) {
			e.idleDrainers.Add(-1)
			return
		}
		select {
		case key = <-e.handoff:
			e.idleDrainers.Add(-1)
		case <-e.work.Done():
			e.idleDrainers.Add(-1)
			return
		}
	}
}
