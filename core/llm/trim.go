package llm

// Trim keeps the newest max messages as a valid sequence for the API: it
// starts at a user message, so no tool message is left without the
// assistant call it answers. When the turn in progress alone is longer than
// max, the whole turn is kept from its user message — dropping it would
// leave the model without the task it is working on. max <= 0 keeps
// everything. The result may share msgs' backing array.
func Trim(msgs []Message, max int) []Message {
	cut := 0
	if max > 0 && len(msgs) > max {
		cut = len(msgs) - max
	}
	for i := cut; i < len(msgs); i++ {
		if msgs[i].Role == RoleUser {
			return msgs[i:]
		}
	}
	for i := cut - 1; i >= 0; i-- {
		if msgs[i].Role == RoleUser {
			return msgs[i:]
		}
	}
	return nil
}
