package core

import "sync"

// slots are the Engine's concurrency slots: at most Concurrency goroutines,
// each running one signal at a time of the conversations that have work,
// in the order they became ready. A conversation whose signal has run goes
// to the back of the line when it has more, so conversations take turns
// as they did waiting for a slot each.
//
// A worker ends when no conversation has work, and one starts when work
// comes and fewer than Concurrency run. A goroutine per conversation
// waiting for a slot (as before) had its stack shrunk by each collection
// while it waited and grown again, copy by copy, by its next turn: 5–7 %
// of the CPU in a burst over many chats.
type slots struct {
	max int

	mu      sync.Mutex
	ready   []string // conversation keys with work, oldest first
	head    int      // ready[:head] are taken
	workers int
}

// add queues key, which has work, and reports whether the caller must
// start a worker.
func (sl *slots) add(key string) (start bool) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.head > 0 && sl.head == len(sl.ready) {
		sl.ready, sl.head = sl.ready[:0], 0
	}
	sl.ready = append(sl.ready, key)
	if sl.workers < sl.max {
		sl.workers++
		return true
	}
	return false
}

// again puts key, which its worker has served and which may have more
// work, at the back of the line.
func (sl *slots) again(key string) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.ready = append(sl.ready, key)
}

// take returns the next conversation with work. When there is none the
// worker asking ends: it reports false, counted out.
func (sl *slots) take() (string, bool) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.head == len(sl.ready) {
		sl.workers--
		return "", false
	}
	key := sl.ready[sl.head]
	sl.ready[sl.head] = ""
	sl.head++
	if sl.head > len(sl.ready)/2 && sl.head >= 64 { // keep the backing array from only growing
		n := copy(sl.ready, sl.ready[sl.head:])
		sl.ready, sl.head = sl.ready[:n], 0
	}
	return key, true
}

// ready hands key, whose queue has work, to the slots.
func (e *Engine) ready(key string) {
	if e.slots.add(key) {
		go e.serve()
	}
}

// serve is a worker: it runs the next signal of each conversation with
// work until none has, and then ends.
func (e *Engine) serve() {
	for {
		key, ok := e.slots.take()
		if !ok {
			return
		}
		if e.step(key) {
			e.slots.again(key)
		}
	}
}

// step runs key's oldest signal, and reports whether its queue may have
// more. Once the work context is cancelled (shutdown past the grace
// period), the rest of the queue is dropped, not processed into doomed
// turns.
func (e *Engine) step(key string) (more bool) {
	s, ok := e.queues.pop(key)
	if !ok {
		return false // its queue is gone: a push starts it again
	}
	if e.process(s) {
		e.done(s)
		s.journal.end(true)
		e.queues.finish()
		return true
	}
	dropped := 0
	for ok {
		dropped++
		s.journal.end(false)
		e.queues.finish()
		s, ok = e.queues.pop(key)
	}
	e.log.Warn().Str("conv", key).Int("signals", dropped).Msg("shutdown: queued signals dropped unprocessed")
	return false
}
