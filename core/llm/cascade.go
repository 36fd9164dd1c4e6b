package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// maxCooldown caps how long a Retry-After can bench a provider.
const maxCooldown = 10 * time.Minute

// Cascade is a Provider that tries its providers in order and answers with
// the first that succeeds. A provider that answered 429 with Retry-After
// is skipped until that time has passed, unless every other provider
// failed too: then it gets a last chance.
type Cascade struct {
	log       zerolog.Logger
	providers []Provider
	now       func() time.Time

	mu       sync.Mutex
	coolTill []time.Time // by provider index
}

var _ Provider = (*Cascade)(nil)

// NewCascade returns a cascade over providers, tried in the given order.
func NewCascade(log zerolog.Logger, providers ...Provider) *Cascade {
	return &Cascade{
		log:       log.With().Str("component", "llm").Logger(),
		providers: providers,
		now:       time.Now,
		coolTill:  make([]time.Time, len(providers)),
	}
}

// Name returns "cascade".
func (c *Cascade) Name() string { return "cascade" }

// Complete asks the providers in order and returns the first answer, with
// Response.Provider naming who answered. An ErrContextTooLong is returned at
// once, without trying the next provider. When ctx ends it stops and returns
// ctx's error; when all providers fail the error says so and wraps the last
// provider's error. Before the next provider is asked, req.Sink (when set)
// is told to Discard what the failed one streamed; when none is asked
// (Complete returns an error) the caller withdraws what was streamed.
func (c *Cascade) Complete(ctx context.Context, req Request) (Response, error) {
	if len(c.providers) == 0 {
		return Response{}, errors.New("llm: cascade has no providers")
	}
	ready, cooling := c.order()
	for _, i := range cooling {
		c.log.Debug().Str("provider", c.providers[i].Name()).Msg("llm provider cooling down after 429, tried last")
	}
	var lastErr error
	var lastName string
	tried := 0
	for _, i := range append(ready, cooling...) {
		p := c.providers[i]
		if tried > 0 && req.Sink != nil {
			// Whatever the last one streamed is not the answer: never show it.
			req.Sink.Discard()
		}
		resp, err := p.Complete(ctx, req)
		tried++
		if err == nil {
			return c.answered(p, resp, tried), nil
		}
		if ctx.Err() != nil {
			return Response{}, fmt.Errorf("llm: %s: %w", p.Name(), ctx.Err())
		}
		c.failed(i, p, err)
		if errors.Is(err, ErrContextTooLong) {
			// The conversation, not the provider, is the problem: the
			// caller shortens it (a fallback with a longer context is
			// not worth sending every over-long request twice).
			return Response{}, fmt.Errorf("llm: %s: %w", p.Name(), err)
		}
		lastErr, lastName = err, p.Name()
	}
	return Response{}, fmt.Errorf("llm: all %d providers failed, last %s: %w", len(c.providers), lastName, lastErr)
}

// order returns the indexes of the providers to try first and of those
// cooling down, each in configuration order.
func (c *Cascade) order() (ready, cooling []int) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.providers {
		if now.Before(c.coolTill[i]) {
			cooling = append(cooling, i)
		} else {
			ready = append(ready, i)
		}
	}
	return ready, cooling
}

func (c *Cascade) answered(p Provider, resp Response, tried int) Response {
	if resp.Provider == "" {
		resp.Provider = p.Name()
	}
	ev := c.log.Debug()
	if tried > 1 {
		ev = c.log.Info()
	}
	ev.Str("provider", resp.Provider).Int("attempt", tried).Msg("llm answered")
	return resp
}

// failed logs a provider's failure (provider errors carry no secrets) and
// benches it for its Retry-After when it was rate limited.
func (c *Cascade) failed(i int, p Provider, err error) {
	var se *StatusError
	ev := c.log.Warn().Str("provider", p.Name()).Str("class", ErrorClass(err)).Err(err)
	if errors.As(err, &se) && se.Status == http.StatusTooManyRequests && se.RetryAfter > 0 {
		d := min(se.RetryAfter, maxCooldown)
		c.mu.Lock()
		c.coolTill[i] = c.now().Add(d)
		c.mu.Unlock()
		ev = ev.Dur("cooldown", d)
	}
	ev.Msg("llm provider failed")
}
