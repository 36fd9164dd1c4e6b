package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// DefaultTimeout bounds one request to an OpenAI-compatible API when
// OpenAIConfig.Timeout is zero.
const DefaultTimeout = 60 * time.Second

// DefaultBaseURL is OpenAI's API base.
const DefaultBaseURL = "https://api.openai.com/v1"

// OpenAIConfig configures an OpenAI-compatible chat completions provider.
type OpenAIConfig struct {
	// Name identifies the provider in logs and errors; default "openai".
	Name string
	// BaseURL is the full API base, e.g. "https://api.openai.com/v1" or
	// "http://127.0.0.1:1234/v1"; default DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token; may be empty for local servers.
	APIKey string
	Model  string
	// Stream asks for server-sent events and accumulates them, telling
	// Request.Sink the text as it grows.
	Stream bool
	// Timeout bounds one request (the whole stream when streaming);
	// default DefaultTimeout.
	Timeout time.Duration
	// HTTPClient is used for requests; default a client that keeps up to
	// MaxIdleConnsPerHost connections to the server open between requests.
	HTTPClient *http.Client
	// MaxTokens caps the completion; zero leaves it to the server.
	MaxTokens int
	// Vision says the model takes images: a user message's Images are
	// sent as image parts. Without it they are left out.
	Vision bool
}

// OpenAI is a Provider speaking the OpenAI chat completions API (OpenAI,
// Ollama, vLLM, llama.cpp, OpenRouter, …) through go-openai.
type OpenAI struct {
	name      string
	model     string
	stream    bool
	timeout   time.Duration
	maxTokens int
	vision    bool
	client    *openai.Client
	secrets   *secrets.Set
	tools     atomic.Pointer[toolCache]
}

var _ Provider = (*OpenAI)(nil)

// NewOpenAI checks cfg and returns the provider. It does not connect.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if cfg.Name == "" {
		cfg.Name = "openai"
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if err := checkBaseURL(cfg.BaseURL); err != nil {
		return nil, fmt.Errorf("llm: provider %s: base_url: %w", cfg.Name, err)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("llm: provider %s: model is required", cfg.Name)
	}
	if cfg.Timeout < 0 || cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("llm: provider %s: timeout and max_tokens must not be negative", cfg.Name)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Transport: newTransport()}
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = tapDoer{client: cfg.HTTPClient}
	return &OpenAI{
		name:      cfg.Name,
		model:     cfg.Model,
		stream:    cfg.Stream,
		timeout:   cfg.Timeout,
		maxTokens: cfg.MaxTokens,
		vision:    cfg.Vision,
		client:    openai.NewClientWithConfig(oc),
		secrets:   secrets.New(cfg.APIKey, urlPassword(cfg.BaseURL)),
	}, nil
}

// MaxIdleConnsPerHost is how many idle connections to the LLM server the
// default client keeps for reuse: above the engine's default concurrency
// (8 turns at once), so concurrent turns do not each dial anew. The
// standard library's default, 2, made a busy bot open (and close) a TCP
// connection for most requests; the CPU profile of the bench showed it.
const MaxIdleConnsPerHost = 16

// NewTransport returns the transport of the HTTP client NewOpenAI makes
// when OpenAIConfig.HTTPClient is nil, for a client shared by several
// providers of one server.
func NewTransport() *http.Transport { return newTransport() }

// newTransport is http.DefaultTransport (proxy from the environment,
// timeouts; HTTP/1.1 in the release, built with nethttpomithttp2) keeping MaxIdleConnsPerHost idle connections per host.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = MaxIdleConnsPerHost
	return t
}

// checkBaseURL accepts absolute http(s) URLs. Its errors never echo the URL,
// which may carry credentials.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return errors.New("want an absolute http(s) URL such as https://api.openai.com/v1")
	}
	return nil
}

func urlPassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// Name returns the configured provider name.
func (p *OpenAI) Name() string { return p.name }

// Complete sends the conversation and returns the assistant's message.
// Errors name the provider, never contain the API key, and wrap
// ErrRetryable for transport errors, timeouts, 429 and 5xx (a *StatusError
// carries the status and Retry-After). When ctx itself ends, the error wraps
// ctx.Err() and is not retryable.
func (p *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	creq := p.chatRequest(req)
	rctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	tap := &httpTap{}
	rctx = context.WithValue(rctx, tapKey{}, tap)

	var resp Response
	var err error
	if p.stream {
		resp, err = p.completeStream(rctx, creq, req.Sink)
	} else {
		resp, err = p.completeOnce(rctx, creq)
	}
	if err != nil {
		return Response{}, p.wrapError(ctx, rctx, tap, err)
	}
	resp.Provider = p.name
	return resp, nil
}

func (p *OpenAI) chatRequest(req Request) openai.ChatCompletionRequest {
	creq := openai.ChatCompletionRequest{
		Model:    p.model,
		Messages: toOpenAIMessages(req.Messages, p.vision),
		Tools:    p.toolsFor(req.Tools),
	}
	if p.maxTokens > 0 {
		if reasoningModel(p.model) {
			creq.MaxCompletionTokens = p.maxTokens
		} else {
			creq.MaxTokens = p.maxTokens
		}
	}
	if p.stream {
		creq.Stream = true
		creq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	return creq
}

// reasoningModel reports models for which go-openai (and OpenAI) refuse
// max_tokens in favour of max_completion_tokens.
func reasoningModel(model string) bool {
	for _, prefix := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(model, prefix) {
			return true
		}
	}
	return false
}

func (p *OpenAI) completeOnce(ctx context.Context, creq openai.ChatCompletionRequest) (Response, error) {
	resp, err := p.client.CreateChatCompletion(ctx, creq)
	if err != nil {
		return Response{}, err
	}
	if len(resp.Choices) == 0 {
		return Response{}, errNoChoices
	}
	return Response{
		Message: fromOpenAIMessage(resp.Choices[0].Message),
		Usage:   Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens},
	}, nil
}
