package openai

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// answer writes the step's answer to req.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, req Request, st Step) {
	switch st.kind {
	case kindStatus:
		writeStatus(w, st)
	case kindMalformed:
		writeMalformed(w, req.Stream)
	case kindHang:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case kindStreamCut:
		s.writeCut(r.Context(), w, req)
	case kindStreamNoFinish:
		if req.Stream {
			s.writeStream(r.Context(), w, req, st, false)
			return
		}
		s.writeJSON(w, req, Text(st.text))
	default:
		if req.Stream {
			s.writeStream(r.Context(), w, req, st, true)
			return
		}
		s.writeJSON(w, req, st)
	}
}

// The answer as sent on the wire.
type wireResponse struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage,omitempty"`
}

type wireChoice struct {
	Index        int              `json:"index"`
	Message      *wireAnswerMsg   `json:"message,omitempty"`
	Delta        *wireAnswerMsg   `json:"delta,omitempty"`
	FinishReason *string          `json:"finish_reason"`
	Logprobs     *json.RawMessage `json:"logprobs"`
}

type wireAnswerMsg struct {
	Role      string     `json:"role,omitempty"`
	Content   *string    `json:"content,omitempty"`
	ToolCalls []wireCall `json:"tool_calls,omitempty"`
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (s *Server) envelope(req Request) wireResponse {
	model := req.Model
	if model == "" {
		model = "fake-model"
	}
	return wireResponse{
		ID:      "chatcmpl-fake-" + strconv.FormatInt(s.seq.Add(1), 10),
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   model,
	}
}

func usageFor(req Request, st Step) *wireUsage {
	n := len(st.text)
	for _, c := range st.calls {
		n += len(c.Name) + len(c.Args)
	}
	u := &wireUsage{PromptTokens: req.BodySize/4 + 1, CompletionTokens: n/4 + 1}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func (s *Server) writeJSON(w http.ResponseWriter, req Request, st Step) {
	resp := s.envelope(req)
	msg := &wireAnswerMsg{Role: "assistant"}
	finish := "stop"
	if st.kind == kindToolCalls {
		finish = "tool_calls"
		for i, c := range st.calls {
			msg.ToolCalls = append(msg.ToolCalls, wireToolCall(i, c, c.Args, true))
		}
		if st.text != "" {
			msg.Content = &st.text
		}
	} else {
		msg.Content = &st.text
	}
	resp.Choices = []wireChoice{{Message: msg, FinishReason: &finish}}
	resp.Usage = usageFor(req, st)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// wireToolCall renders a call; head carries the id, type and name (the
// first delta of a streamed call, or a whole call).
func wireToolCall(i int, c Call, args string, head bool) wireCall {
	wc := wireCall{Index: &i}
	if head {
		wc.ID, wc.Type, wc.Function.Name = c.ID, "function", c.Name
		if wc.ID == "" {
			wc.ID = fmt.Sprintf("call_fake_%d", i)
		}
	}
	wc.Function.Arguments = args
	return wc
}

// writeStatus writes an OpenAI-style error answer.
func writeStatus(w http.ResponseWriter, st Step) {
	msg, typ := "The server had an error while processing your request. Sorry about that!", "server_error"
	switch {
	case st.status == http.StatusTooManyRequests:
		msg, typ = "Rate limit reached for requests. Please try again later.", "requests"
	case st.status < 500:
		msg, typ = http.StatusText(st.status), "invalid_request_error"
	}
	if st.message != "" {
		msg = st.message
	}
	writeError(w, st.status, msg, typ, st.retryAfter)
}

func writeError(w http.ResponseWriter, code int, msg, typ string, retryAfter time.Duration) {
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retryAfter.Seconds()))))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	body := map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}}
	_ = json.NewEncoder(w).Encode(body)
}

func writeMalformed(w http.ResponseWriter, stream bool) {
	if stream {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"id\":\"chatcmpl-fake\",\"choices\":[{oops}\n\n"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"id":"chatcmpl-fake","choices":[{"index":0,"message":{oops}}]}`))
}
