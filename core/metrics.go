package core

import (
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// recordLLM records one completion request: the provider that answered
// (the configured one when none did), its outcome, latency and tokens.
func (t *turnState) recordLLM(resp llm.Response, err error, took time.Duration) {
	m := t.cfg.Metrics
	if m == nil {
		return
	}
	provider := resp.Provider
	if provider == "" {
		provider = t.cfg.Provider.Name()
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.LLMRequest(provider, outcome, took)
	m.Tokens(provider, resp.Usage.PromptTokens, resp.Usage.CompletionTokens)
}

// toolLabel is a tool's name as a metric label: a registered tool's name,
// else "unknown", so the model's text never becomes a series.
func (t *turnState) toolLabel(name string) string {
	if _, known := t.cfg.Tools.ReadOnly(name); known {
		return name
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
