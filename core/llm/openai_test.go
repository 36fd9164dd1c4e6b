package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

const testKey = "sk-test-SUPERSECRET-0123456789abcdefghij"

func newOpenAI(t testing.TB, url string, stream bool, edit ...func(*llm.OpenAIConfig)) *llm.OpenAI {
	t.Helper()
	cfg := llm.OpenAIConfig{Name: "primary", BaseURL: url, APIKey: testKey, Model: "gpt-test", Stream: stream, Timeout: 5 * time.Second}
	for _, e := range edit {
		e(&cfg)
	}
	p, err := llm.NewOpenAI(cfg)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	return p
}

// checkErr fails unless err is non-nil, names the provider and hides the key.
func checkErr(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("want an error, got none")
	}
	if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "SUPERSECRET") {
		t.Fatalf("error leaks the API key: %v", err)
	}
	if !strings.Contains(err.Error(), "primary") {
		t.Errorf("error does not name the provider: %v", err)
	}
}

var modes = []struct {
	name   string
	stream bool
}{{"json", false}, {"stream", true}}

func userReq(text string) llm.Request {
	return llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are a test."},
		{Role: llm.RoleUser, Content: text},
	}}
}

func TestOpenAIPlainAnswer(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			srv := fakeopenai.Start(t)
			want := "Hello there — a reply long enough to be split into chunks ✓."
			srv.Push(fakeopenai.Text(want))
			p := newOpenAI(t, srv.URL(), m.stream)
			resp, err := p.Complete(context.Background(), userReq("hi"))
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Message.Content != want || resp.Message.Role != llm.RoleAssistant || len(resp.Message.ToolCalls) != 0 {
				t.Errorf("message = %+v, want assistant text %q", resp.Message, want)
			}
			if resp.Provider != "primary" {
				t.Errorf("Provider = %q", resp.Provider)
			}
			if resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 {
				t.Errorf("usage not read: %+v", resp.Usage)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Model != "gpt-test" || r.Stream != m.stream || r.IncludeUsage != m.stream || r.Authorization != "Bearer "+testKey {
				t.Errorf("request = model %q stream %v usage %v auth ok %v", r.Model, r.Stream, r.IncludeUsage, r.Authorization == "Bearer "+testKey)
			}
			if len(r.Messages) != 2 || r.Messages[1].Role != "user" || r.Messages[1].Content != "hi" || len(r.Tools) != 0 {
				t.Errorf("messages = %+v tools = %+v", r.Messages, r.Tools)
			}
		})
	}
}

var testTools = []llm.ToolSpec{
	{Name: "shell", Description: "Run a command.", Parameters: []byte(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)},
	{Name: "current_time", Description: "The time."},
}

func TestOpenAIToolCalls(t *testing.T) {
	calls := []fakeopenai.Call{
		{ID: "call_a", Name: "shell", Args: `{"command":"ls -la | grep 'é'"}`},
		{ID: "call_b", Name: "current_time", Args: `{}`},
	}
	for _, m := range modes {
		for _, n := range []int{1, 2} {
			t.Run(m.name+"/"+string(rune('0'+n)), func(t *testing.T) {
				srv := fakeopenai.Start(t)
				srv.Push(fakeopenai.ToolCalls(calls[:n]...))
				p := newOpenAI(t, srv.URL(), m.stream)
				req := userReq("list")
				req.Tools = testTools
				resp, err := p.Complete(context.Background(), req)
				if err != nil {
					t.Fatalf("Complete: %v", err)
				}
				got := resp.Message.ToolCalls
				if len(got) != n {
					t.Fatalf("%d calls, want %d: %+v", len(got), n, got)
				}
				for i, c := range got {
					w := calls[i]
					if c.ID != w.ID || c.Name != w.Name || c.Args != w.Args {
						t.Errorf("call %d = %+v, want %+v", i, c, w)
					}
				}
				checkToolsSent(t, srv.Requests()[0].Tools)
			})
		}
	}
}

func checkToolsSent(t *testing.T, tools []fakeopenai.Tool) {
	t.Helper()
	if len(tools) != 2 || tools[0].Name != "shell" || tools[0].Description != "Run a command." {
		t.Fatalf("tools sent = %+v", tools)
	}
	var schema struct{ Required []string }
	if err := json.Unmarshal(tools[0].Parameters, &schema); err != nil || len(schema.Required) != 1 {
		t.Errorf("schema sent = %s (%v)", tools[0].Parameters, err)
	}
	if !json.Valid(tools[1].Parameters) {
		t.Errorf("empty schema not replaced by an object schema: %s", tools[1].Parameters)
	}
}

func TestOpenAISendsToolHistory(t *testing.T) {
	srv := fakeopenai.Start(t)
	p := newOpenAI(t, srv.URL(), false)
	req := llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "time?"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "current_time", Args: "{}"}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Content: "12:00"},
		{Role: llm.RoleAssistant}, // empty: left out
		{Role: llm.RoleUser, Content: "again"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c2", Name: "current_time", Args: "{}"}}},
		{Role: llm.RoleTool, ToolCallID: "c2"},
	}}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Requests()[0].Messages
	if len(msgs) != 6 || msgs[3].Role != "user" || msgs[5].Content != "(no output)" {
		t.Fatalf("messages = %+v", msgs)
	}
	if c := msgs[1].ToolCalls; msgs[1].Role != "assistant" || len(c) != 1 || c[0] != (fakeopenai.Call{ID: "c1", Name: "current_time", Args: "{}"}) {
		t.Errorf("assistant message = %+v", msgs[1])
	}
	if msgs[2].Role != "tool" || msgs[2].ToolCallID != "c1" || msgs[2].Content != "12:00" {
		t.Errorf("tool message = %+v", msgs[2])
	}
}

func TestOpenAIErrors(t *testing.T) {
	tests := []struct {
		name       string
		stream     bool
		step       fakeopenai.Step
		retryable  bool
		class      string
		status     int
		retryAfter time.Duration
	}{
		{"500", false, fakeopenai.Status(500, 0), true, "server_error", 500, 0},
		{"503 stream", true, fakeopenai.Status(503, 0), true, "server_error", 503, 0},
		{"429 retry-after", false, fakeopenai.Status(429, 3*time.Second), true, "rate_limited", 429, 3 * time.Second},
		{"429 stream", true, fakeopenai.Status(429, 2*time.Second), true, "rate_limited", 429, 2 * time.Second},
		{"400", false, fakeopenai.Status(400, 0), false, "client_error", 400, 0},
		{"401 echoing the key", false, fakeopenai.Status(401, 0).WithMessage("Incorrect API key provided: " + testKey), false, "client_error", 401, 0},
		{"malformed", false, fakeopenai.Malformed(), false, "bad_response", 0, 0},
		{"malformed stream", true, fakeopenai.Malformed(), false, "bad_response", 0, 0},
		{"cut", false, fakeopenai.StreamCut(), true, "transport", 0, 0},
		{"stream cut", true, fakeopenai.StreamCut(), true, "transport", 0, 0},
		{"stream without finish", true, fakeopenai.StreamNoFinish(), true, "transport", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeopenai.Start(t)
			srv.Push(tt.step)
			p := newOpenAI(t, srv.URL(), tt.stream)
			_, err := p.Complete(context.Background(), userReq("hi"))
			checkErr(t, err)
			t.Log(err)
			if got := errors.Is(err, llm.ErrRetryable); got != tt.retryable {
				t.Errorf("retryable = %v, want %v (%v)", got, tt.retryable, err)
			}
			if got := llm.ErrorClass(err); got != tt.class {
				t.Errorf("class = %q, want %q (%v)", got, tt.class, err)
			}
			var se *llm.StatusError
			if errors.As(err, &se) != (tt.status != 0) {
				t.Fatalf("StatusError = %v, want status %d (%v)", se, tt.status, err)
			}
			if se != nil && (se.Status != tt.status || se.RetryAfter != tt.retryAfter || se.Provider != "primary") {
				t.Errorf("StatusError = %+v, want status %d retry after %s", se, tt.status, tt.retryAfter)
			}
		})
	}
}

func TestOpenAITimeout(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			srv := fakeopenai.Start(t)
			srv.Push(fakeopenai.Hang())
			p := newOpenAI(t, srv.URL(), m.stream, func(c *llm.OpenAIConfig) { c.Timeout = 50 * time.Millisecond })
			_, err := p.Complete(context.Background(), userReq("hi"))
			checkErr(t, err)
			if !errors.Is(err, llm.ErrRetryable) || !errors.Is(err, context.DeadlineExceeded) || llm.ErrorClass(err) != "timeout" {
				t.Errorf("err = %v (class %s), want a retryable timeout", err, llm.ErrorClass(err))
			}
		})
	}
}

func TestOpenAICallerCancelled(t *testing.T) {
	srv := fakeopenai.Start(t)
	srv.Push(fakeopenai.Hang())
	p := newOpenAI(t, srv.URL(), false)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		testutil.WaitFor(t, "the request", func() bool { return len(srv.Requests()) > 0 })
		cancel()
	}()
	_, err := p.Complete(ctx, userReq("hi"))
	checkErr(t, err)
	if errors.Is(err, llm.ErrRetryable) || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled and not retryable", err)
	}
}

func TestOpenAIConnectionRefused(t *testing.T) {
	srv := fakeopenai.New()
	url := srv.URL()
	srv.Close()
	p := newOpenAI(t, url, false)
	_, err := p.Complete(context.Background(), userReq("hi"))
	checkErr(t, err)
	if !errors.Is(err, llm.ErrRetryable) || llm.ErrorClass(err) != "transport" {
		t.Errorf("err = %v (class %s), want retryable transport", err, llm.ErrorClass(err))
	}
}

func TestNewOpenAIValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  llm.OpenAIConfig
	}{
		{"no model", llm.OpenAIConfig{APIKey: testKey}},
		{"relative url", llm.OpenAIConfig{APIKey: testKey, Model: "m", BaseURL: "api.example.com/v1"}},
		{"ftp url", llm.OpenAIConfig{APIKey: testKey, Model: "m", BaseURL: "ftp://user:SUPERSECRET@h/v1"}},
		{"negative timeout", llm.OpenAIConfig{APIKey: testKey, Model: "m", Timeout: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llm.NewOpenAI(tt.cfg)
			if err == nil {
				t.Fatal("want an error")
			}
			if strings.Contains(err.Error(), "SUPERSECRET") {
				t.Errorf("error leaks a secret: %v", err)
			}
		})
	}
	p, err := llm.NewOpenAI(llm.OpenAIConfig{Model: "m"})
	if err != nil || p.Name() != "openai" {
		t.Errorf("defaults: %v, name %q", err, p.Name())
	}
}

func TestOpenAIMaxTokens(t *testing.T) {
	srv := fakeopenai.Start(t)
	for _, model := range []string{"gpt-4o-mini", "o3-mini"} {
		p := newOpenAI(t, srv.URL(), false, func(c *llm.OpenAIConfig) { c.MaxTokens = 77; c.Model = model })
		if _, err := p.Complete(context.Background(), userReq("hi")); err != nil {
			t.Fatalf("%s: %v", model, err)
		}
	}
	for _, r := range srv.Requests() {
		if r.MaxTokens != 77 {
			t.Errorf("%s: max tokens = %d", r.Model, r.MaxTokens)
		}
	}
}
