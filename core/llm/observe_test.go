package llm_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// recorder keeps what llm.Observed records, one line per call.
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) LLMRequest(provider, outcome string, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, "request "+provider+" "+outcome)
}

func (r *recorder) Tokens(provider string, prompt, completion int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, fmt.Sprintf("tokens %s %d+%d", provider, prompt, completion))
}

func (r *recorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// TestObservedRecordsEveryProviderOfACascade: with each provider wrapped
// in llm.Observed, a request that fails over is recorded once for each
// provider tried — the failure under the provider that failed, the answer
// and its tokens under the one that answered — and never under the
// cascade's own name; a request its caller cancels is recorded not at all.
func TestObservedRecordsEveryProviderOfACascade(t *testing.T) {
	rec := &recorder{}
	good := answering("second", "hello")
	good.fn = func(context.Context) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "hello"},
			Usage: llm.Usage{PromptTokens: 7, CompletionTokens: 3}}, nil
	}
	c := llm.NewCascade(zerolog.Nop(),
		llm.Observed(failing("first", errors.New("502 bad gateway")), rec),
		llm.Observed(good, rec))
	if c.Name() != "cascade" {
		t.Fatalf("cascade name %q", c.Name())
	}
	resp, err := c.Complete(context.Background(), userReq("hi"))
	if err != nil || resp.Provider != "second" {
		t.Fatalf("Complete = %+v, %v; want second's answer", resp, err)
	}
	want := []string{"request first error", "request second ok", "tokens second 7+3"}
	if got := rec.lines(); !slices.Equal(got, want) {
		t.Errorf("recorded %q; want %q", got, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cut := &stub{name: "cut", fn: func(context.Context) (llm.Response, error) {
		cancel()
		return llm.Response{}, context.Canceled
	}}
	if _, err := llm.Observed(cut, rec).Complete(ctx, userReq("hi")); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: %v", err)
	}
	if got := rec.lines(); len(got) != len(want) {
		t.Errorf("a cancelled request was recorded: %q", got[len(want):])
	}
}
