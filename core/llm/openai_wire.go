package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The OpenAI chat completions API as gatehouse speaks it: the fields it
// sends and reads, nothing else (issue 34: go-openai's client weighed
// 0.2 MB of the binary, sent "stream":false with every request and
// decoded every answer into its larger types).

// wireRequest is a chat completions request.
type wireRequest struct {
	Model               string             `json:"model"`
	Messages            []wireMessage      `json:"messages"`
	MaxTokens           int                `json:"max_tokens,omitempty"`
	MaxCompletionTokens int                `json:"max_completion_tokens,omitempty"`
	Stream              bool               `json:"stream,omitempty"`
	StreamOptions       *wireStreamOptions `json:"stream_options,omitempty"`
	Tools               []wireTool         `json:"tools,omitempty"`
}

type wireStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// wireMessage is a message sent: its content a string, or the parts of a
// user message with images.
type wireMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content,omitempty"`
	Parts      []wirePart     `json:"-"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

// MarshalJSON sends Parts, when there are any, as the content.
func (m wireMessage) MarshalJSON() ([]byte, error) {
	type plain wireMessage
	if len(m.Parts) == 0 {
		return json.Marshal(plain(m))
	}
	return json.Marshal(struct {
		Role    string     `json:"role"`
		Content []wirePart `json:"content"`
	}{m.Role, m.Parts})
}

type wirePart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

type wireTool struct {
	Type     string           `json:"type"`
	Function *wireFunctionDef `json:"function"`
}

type wireFunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// wireAnswer is a chat completion, or one chunk of a streamed one.
type wireAnswer struct {
	Choices []struct {
		Index        int           `json:"index"`
		Message      wireMessageIn `json:"message"`
		Delta        wireMessageIn `json:"delta"`
		FinishReason string        `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// wireMessageIn is a message received. Its content is a string, null, or
// (some servers) an array of parts, whose texts are joined.
type wireMessageIn struct {
	Content   wireContent    `json:"content"`
	ToolCalls []wireToolCall `json:"tool_calls"`
}

type wireContent string

// UnmarshalJSON reads a string, null or an array of text parts.
func (c *wireContent) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '[' {
		var parts []wirePart
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var sb strings.Builder
		for _, p := range parts {
			sb.WriteString(p.Text)
		}
		*c = wireContent(sb.String())
		return nil
	}
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s != nil {
		*c = wireContent(*s)
	}
	return nil
}

// maxAnswer bounds the body of an answer read (a completion, an error, a
// transcription; a stream's bound is per event, maxStreamLine).
const maxAnswer = 16 << 20

// errAnswerTooLarge is the error of an answer over maxAnswer.
var errAnswerTooLarge = fmt.Errorf("the answer is over %d MiB", maxAnswer>>20)

// apiError is the server's answer with an error status: its message and
// code when the body is OpenAI's error object, and its Retry-After.
type apiError struct {
	status     int
	message    string
	code       any // a string, an int or nil
	retryAfter time.Duration
}

func (e *apiError) Error() string {
	if e.message == "" {
		return fmt.Sprintf("HTTP %d", e.status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.status, e.message)
}

// newAPIError reads the error object of an answer with an error status:
// {"error": {"message": "…" or ["…", …], "code": "…" or 123}}.
func newAPIError(resp *http.Response) *apiError {
	e := &apiError{status: resp.StatusCode, retryAfter: retryAfter(resp.Header, time.Now())}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	var w struct {
		Error *struct {
			Message json.RawMessage `json:"message"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &w) != nil || w.Error == nil {
		return e
	}
	var msgs []string
	if json.Unmarshal(w.Error.Message, &e.message) != nil && json.Unmarshal(w.Error.Message, &msgs) == nil {
		e.message = strings.Join(msgs, ", ")
	}
	var n int
	var s string
	switch {
	case json.Unmarshal(w.Error.Code, &n) == nil:
		e.code = n
	case json.Unmarshal(w.Error.Code, &s) == nil:
		e.code = s
	}
	return e
}

// do sends a request to the API's path with body and returns the answer
// when its status is 2xx; an error status is an *apiError, the body read
// and closed.
func (p *OpenAI) do(ctx context.Context, path, contentType string, body io.Reader, stream bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.baseURL+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	if stream {
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Cache-Control", "no-cache")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if p.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.apiKey)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		defer resp.Body.Close()
		return nil, newAPIError(resp)
	}
	return resp, nil
}

// postJSON sends v as JSON to path and decodes the answer into out.
func (p *OpenAI) postJSON(ctx context.Context, path string, v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode the request: %w", err)
	}
	resp, err := p.do(ctx, path, "application/json", bytes.NewReader(b), false)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return decodeAnswer(resp.Body, out)
}

// decodeAnswer decodes a JSON answer of at most maxAnswer bytes into out.
func decodeAnswer(r io.Reader, out any) error {
	lr := &io.LimitedReader{R: r, N: maxAnswer + 1}
	err := json.NewDecoder(lr).Decode(out)
	if lr.N <= 0 {
		return errAnswerTooLarge
	}
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF // an empty body: cut before it began
	}
	return err
}
