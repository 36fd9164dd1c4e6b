package llm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// TestContextTooLongClassified: the code OpenAI sends, or a 400 whose
// message says the maximum context length is exceeded, is
// ErrContextTooLong, streaming or not; other 400s are not.
func TestContextTooLongClassified(t *testing.T) {
	cases := []struct {
		name, body string
		status     int
		want       bool
	}{
		{"code", `{"error":{"message":"too many tokens","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, 400, true},
		{"message", `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.","type":"invalid_request_error","param":null,"code":null}}`, 400, true},
		{"llama.cpp", `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`, 400, true},
		{"other 400", `{"error":{"message":"invalid model","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, 400, false},
		{"500 naming it", `{"error":{"message":"maximum context length is broken","type":"server_error","param":null,"code":null}}`, 500, false},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			p := newOpenAI(t, srv.URL+"/v1", stream)
			_, err := p.Complete(context.Background(), userReq("hi"))
			srv.Close()
			if err == nil {
				t.Fatalf("%s: no error", tc.name)
			}
			if got := errors.Is(err, llm.ErrContextTooLong); got != tc.want {
				t.Errorf("%s (stream %v): errors.Is(ErrContextTooLong) = %v, want %v (%v)", tc.name, stream, got, tc.want, err)
			}
			if tc.want && llm.ErrorClass(err) != "context_too_long" {
				t.Errorf("%s: class %q, want context_too_long", tc.name, llm.ErrorClass(err))
			}
		}
	}
}

// TestCascadeStopsOnContextTooLong: the next provider is not asked; the
// error passes through for the engine to shorten the conversation.
func TestCascadeStopsOnContextTooLong(t *testing.T) {
	first, second := fakeopenai.Start(t), fakeopenai.Start(t)
	p1 := newOpenAI(t, first.URL(), false, func(c *llm.OpenAIConfig) { c.Name = "p1" })
	p2 := newOpenAI(t, second.URL(), false, func(c *llm.OpenAIConfig) { c.Name = "p2" })
	c := llm.NewCascade(zerolog.Nop(), p1, p2)
	first.Push(fakeopenai.Status(400, 0).WithMessage("This model's maximum context length is 128000 tokens."))
	_, err := c.Complete(context.Background(), userReq("hi"))
	if !errors.Is(err, llm.ErrContextTooLong) {
		t.Fatalf("cascade error %v, want ErrContextTooLong", err)
	}
	if n := len(second.Requests()); n != 0 {
		t.Errorf("p2 saw %d requests, want 0", n)
	}
}
