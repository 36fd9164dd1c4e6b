package llm

// Trim keeps at most max of the newest messages and drops from the front
// until the sequence starts at a user message, so that no tool message is left
// without the assistant call it answers. max <= 0 keeps everything. The
// result may share msgs' backing array.
func Trim(msgs []Message, max int) []Message {
	if max > 0 && len(msgs) > max {
		msgs = msgs[len(msgs)-max:]
	}
	for len(msgs) > 0 && msgs[0].Role != RoleUser {
		msgs = msgs[1:]
	}
	return msgs
}
