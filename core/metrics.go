package core

// toolLabel is a tool's name as a metric label: the name of a registered
// tool the conversation's profile offers, else "unknown", so the model's
// text never becomes a series.
func (t *turnState) toolLabel(name string) string {
	if _, known := t.cfg.Tools.ReadOnly(name); known && t.profile.Offers(name) {
		return name // a tool the profile does not offer is unknown here
	}
	return "unknown"
}

// QueueDepth returns how many signals wait in the conversation queues (not
// counting those being processed).
func (e *Engine) QueueDepth() int {
	qs := e.queues
	qs.mu.Lock()
	defer qs.mu.Unlock()
	n := 0
	for _, q := range qs.m {
		n += len(q.items)
	}
	return n
}
