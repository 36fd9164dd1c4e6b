package llm

import (
	"context"
	"time"
)

// Recorder records the completion requests of providers; the App's
// metrics registry is one.
type Recorder interface {
	// LLMRequest records one request to provider: its outcome ("ok" or
	// "error") and its latency.
	LLMRequest(provider, outcome string, took time.Duration)
	// Tokens records the usage the API reported for a request to provider.
	Tokens(provider string, prompt, completion int)
}

// Observed returns p with each of its requests recorded in r under p's
// name: its outcome, its own latency and the tokens it reported. Wrap each
// provider before building a Cascade over them, so that a request that
// fails over is recorded once per provider tried (the failure under the
// one that failed), not once under the cascade. A request cut by its
// caller's context (a /cancel, a shutdown) is not the provider's outcome
// and is not recorded.
func Observed(p Provider, r Recorder) Provider { return observed{p: p, r: r} }

type observed struct {
	p Provider
	r Recorder
}

func (o observed) Name() string { return o.p.Name() }

func (o observed) Complete(ctx context.Context, req Request) (Response, error) {
	began := time.Now()
	resp, err := o.p.Complete(ctx, req)
	took := time.Since(began)
	if err != nil && ctx.Err() != nil {
		return resp, err
	}
	name := o.p.Name()
	if err != nil {
		o.r.LLMRequest(name, "error", took)
		return resp, err
	}
	o.r.LLMRequest(name, "ok", took)
	o.r.Tokens(name, resp.Usage.PromptTokens, resp.Usage.CompletionTokens)
	return resp, nil
}
