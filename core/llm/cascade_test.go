package llm_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

func TestCascadeFallsThrough(t *testing.T) {
	first, second := fakeopenai.Start(t), fakeopenai.Start(t)
	p1 := newOpenAI(t, first.URL(), false, func(c *llm.OpenAIConfig) { c.Name = "p1" })
	p2 := newOpenAI(t, second.URL(), true, func(c *llm.OpenAIConfig) { c.Name = "p2" })
	var logs bytes.Buffer
	c := llm.NewCascade(zerolog.New(&logs), p1, p2)

	first.Push(fakeopenai.Status(500, 0), fakeopenai.Status(429, time.Minute))
	second.Push(fakeopenai.Text("second answered"), fakeopenai.Text("second again"), fakeopenai.Text("second while p1 cools"))
	for i, want := range []string{"second answered", "second again", "second while p1 cools"} {
		resp, err := c.Complete(context.Background(), userReq("hi"))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if resp.Message.Content != want || resp.Provider != "p2" {
			t.Errorf("request %d: %q from %q, want %q from p2", i, resp.Message.Content, resp.Provider, want)
		}
	}
	if n := len(first.Requests()); n != 2 {
		t.Errorf("p1 saw %d requests, want 2 (skipped while cooling down)", n)
	}
	// p2 fails: p1, though cooling down, gets its last chance.
	second.Push(fakeopenai.Status(503, 0))
	resp, err := c.Complete(context.Background(), userReq("hi"))
	if err != nil || resp.Provider != "p1" || resp.Message.Content != fakeopenai.DefaultAnswer {
		t.Errorf("last chance: %+v, %v", resp, err)
	}
	out := logs.String()
	for _, want := range []string{`"provider":"p1","class":"server_error"`, `"class":"rate_limited"`, `"cooldown"`, `"provider":"p2","attempt":2`, `llm answered`} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, testKey) {
		t.Error("logs leak the API key")
	}
}

// stub is a scripted Provider.
type stub struct {
	name  string
	calls int
	fn    func(ctx context.Context) (llm.Response, error)
}

func (s *stub) Name() string { return s.name }
func (s *stub) Complete(ctx context.Context, _ llm.Request) (llm.Response, error) {
	s.calls++
	return s.fn(ctx)
}

func failing(name string, err error) *stub {
	return &stub{name: name, fn: func(context.Context) (llm.Response, error) { return llm.Response{}, err }}
}

func answering(name, text string) *stub {
	return &stub{name: name, fn: func(context.Context) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: text}}, nil
	}}
}

func TestCascadeAllFail(t *testing.T) {
	last := &llm.StatusError{Provider: "b", Status: 502}
	c := llm.NewCascade(zerolog.Nop(), failing("a", errors.New("a: boom")), failing("b", last))
	_, err := c.Complete(context.Background(), userReq("hi"))
	if err == nil || !strings.Contains(err.Error(), "all 2 providers failed") || !errors.Is(err, last) || !errors.Is(err, llm.ErrRetryable) {
		t.Errorf("err = %v", err)
	}
	if _, err := llm.NewCascade(zerolog.Nop()).Complete(context.Background(), userReq("hi")); err == nil {
		t.Error("empty cascade: want an error")
	}
}

func TestCascadeStopsWhenCallerCancels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a := &stub{name: "a", fn: func(context.Context) (llm.Response, error) {
		cancel()
		return llm.Response{}, context.Canceled
	}}
	b := answering("b", "too late")
	_, err := llm.NewCascade(zerolog.Nop(), a, b).Complete(ctx, userReq("hi"))
	if !errors.Is(err, context.Canceled) || b.calls != 0 {
		t.Errorf("err = %v, b called %d times", err, b.calls)
	}
}

func TestCascadeSetsProviderAndCoolsDown(t *testing.T) {
	now := time.Unix(1000, 0)
	limited := failing("a", &llm.StatusError{Provider: "a", Status: 429, RetryAfter: 30 * time.Second})
	b := answering("b", "ok")
	c := llm.NewCascade(zerolog.Nop(), limited, b)
	llm.SetCascadeClock(c, func() time.Time { return now })
	steps := []struct {
		advance time.Duration
		aCalls  int
	}{{0, 1}, {10 * time.Second, 1}, {25 * time.Second, 2}}
	for i, s := range steps {
		now = now.Add(s.advance)
		resp, err := c.Complete(context.Background(), userReq("hi"))
		if err != nil || resp.Provider != "b" {
			t.Fatalf("step %d: %+v %v", i, resp, err)
		}
		if limited.calls != s.aCalls {
			t.Errorf("step %d: a called %d times, want %d", i, limited.calls, s.aCalls)
		}
	}
}
