package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Failures of an answer that arrived.
var (
	errStreamCut = errors.New("stream ended before finish_reason")
	errNoChoices = errors.New("no choices in the answer")
	errCallIndex = errors.New("tool call index out of range")
)

// maxStreamCalls bounds the tool-call index a stream may use.
const maxStreamCalls = 128

// maxStreamLine bounds one line of a stream (one event's data);
// maxStreamNoise bounds the lines in a row that carry no data (comments,
// keep-alives, event names).
const (
	maxStreamLine  = 1 << 20
	maxStreamNoise = 300
)

// completeStream receives the answer as server-sent events, telling sink
// (when not nil) the text each time it grows.
func (p *OpenAI) completeStream(ctx context.Context, creq wireRequest, sink TextSink) (Response, error) {
	b, err := json.Marshal(creq)
	if err != nil {
		return Response{}, fmt.Errorf("encode the request: %w", err)
	}
	resp, err := p.do(ctx, "/chat/completions", "application/json", bytes.NewReader(b), true)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	events := &sseReader{r: bufio.NewReaderSize(resp.Body, 4096)}
	var acc streamAcc
	for {
		data, err := events.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Response{}, err
		}
		var chunk wireAnswer
		if err := json.Unmarshal(data, &chunk); err != nil {
			return Response{}, err
		}
		grew, err := acc.add(chunk)
		if err != nil {
			return Response{}, err
		}
		if grew && sink != nil {
			sink.Text(acc.content.String())
		}
	}
	if acc.finish == "" {
		return Response{}, errStreamCut
	}
	return acc.response(), nil
}

// streamAcc accumulates the deltas of choice 0.
type streamAcc struct {
	content strings.Builder
	calls   []callAcc
	finish  string
	usage   Usage
}

// callAcc is one tool call being assembled. args is a byte slice, not a
// strings.Builder, because calls are kept by value in a growing slice.
type callAcc struct {
	id, name string
	args     []byte
}

// add merges one chunk and reports whether the text grew.
func (a *streamAcc) add(chunk wireAnswer) (grew bool, err error) {
	if u := chunk.Usage; u != nil {
		a.usage = Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue
		}
		a.content.WriteString(string(ch.Delta.Content))
		grew = grew || ch.Delta.Content != ""
		for _, tc := range ch.Delta.ToolCalls {
			if err := a.addCall(tc); err != nil {
				return grew, err
			}
		}
		if ch.FinishReason != "" && ch.FinishReason != "null" {
			a.finish = ch.FinishReason
		}
	}
	return grew, nil
}

// addCall merges one tool-call delta by its index. The id and name arrive
// in the call's first delta, the arguments in pieces. A delta without an
// index (some servers) starts a new call when it has an id and continues
// the last one otherwise.
func (a *streamAcc) addCall(tc wireToolCall) error {
	idx := len(a.calls) - 1
	switch {
	case tc.Index != nil:
		idx = *tc.Index
	case tc.ID != "" || idx < 0:
		idx = len(a.calls)
	}
	if idx < 0 || idx >= maxStreamCalls {
		return errCallIndex
	}
	for len(a.calls) <= idx {
		a.calls = append(a.calls, callAcc{})
	}
	c := &a.calls[idx]
	if tc.ID != "" {
		c.id = tc.ID
	}
	if tc.Function.Name != "" {
		c.name = tc.Function.Name
	}
	c.args = append(c.args, tc.Function.Arguments...)
	return nil
}

func (a *streamAcc) response() Response {
	msg := Message{Role: RoleAssistant, Content: a.content.String()}
	for i := range a.calls {
		c := &a.calls[i]
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: callID(c.id, i), Name: c.name, Args: string(c.args)})
	}
	return Response{Message: msg, Usage: a.usage}
}

// sseReader reads the data of server-sent events, one line each, as the
// chat completions API sends them ("data: {…}", "data: [DONE]").
type sseReader struct {
	r     *bufio.Reader
	noise int
}

// next returns the next event's data; io.EOF after [DONE] or at the end
// of the body. An event whose data is an error object ("data: {"error":
// …}") ends the stream with its message.
func (s *sseReader) next() ([]byte, error) {
	for {
		line, err := s.line()
		if err != nil {
			return nil, err
		}
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			if s.noise++; s.noise > maxStreamNoise {
				return nil, errors.New("stream: too many lines without data")
			}
			continue
		}
		s.noise = 0
		data = bytes.TrimSpace(data)
		switch {
		case string(data) == "[DONE]":
			return nil, io.EOF
		case bytes.HasPrefix(data, []byte(`{"error"`)):
			var w struct {
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			_ = json.Unmarshal(data, &w)
			return nil, fmt.Errorf("error, %s", w.Error.Message)
		}
		return data, nil
	}
}

// line reads one line, trimmed, within maxStreamLine.
func (s *sseReader) line() ([]byte, error) {
	var buf []byte
	for {
		part, err := s.r.ReadSlice('\n')
		if len(buf)+len(part) > maxStreamLine {
			return nil, fmt.Errorf("stream: a line over %d KiB", maxStreamLine>>10)
		}
		buf = append(buf, part...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && len(buf) == 0:
			return nil, err
		}
		return bytes.TrimSpace(buf), nil
	}
}
