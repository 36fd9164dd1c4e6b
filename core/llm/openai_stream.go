package llm

import (
	"context"
	"errors"
	"io"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Failures of an answer that arrived.
var (
	errStreamCut = errors.New("stream ended before finish_reason")
	errNoChoices = errors.New("no choices in the answer")
	errCallIndex = errors.New("tool call index out of range")
)

// maxStreamCalls bounds the tool-call index a stream may use.
const maxStreamCalls = 128

// completeStream receives the answer as server-sent events, telling sink
// (when not nil) the text each time it grows.
func (p *OpenAI) completeStream(ctx context.Context, creq openai.ChatCompletionRequest, sink TextSink) (Response, error) {
	stream, err := p.client.CreateChatCompletionStream(ctx, creq)
	if err != nil {
		return Response{}, err
	}
	defer stream.Close()
	var acc streamAcc
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
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
	finish  openai.FinishReason
	usage   Usage
}

// callAcc is one tool call being assembled. args is a byte slice, not a
// strings.Builder, because calls are kept by value in a growing slice.
type callAcc struct {
	id, name string
	args     []byte
}

// add merges one chunk and reports whether the text grew.
func (a *streamAcc) add(chunk openai.ChatCompletionStreamResponse) (grew bool, err error) {
	if u := chunk.Usage; u != nil {
		a.usage = Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue
		}
		a.content.WriteString(ch.Delta.Content)
		grew = grew || ch.Delta.Content != ""
		for _, tc := range ch.Delta.ToolCalls {
			if err := a.addCall(tc); err != nil {
				return grew, err
			}
		}
		if ch.FinishReason != "" && ch.FinishReason != openai.FinishReasonNull {
			a.finish = ch.FinishReason
		}
	}
	return grew, nil
}

// addCall merges one tool-call delta by its index. The id and name arrive
// in the call's first delta, the arguments in pieces. A delta without an
// index (some servers) starts a new call when it has an id and continues
// the last one otherwise.
func (a *streamAcc) addCall(tc openai.ToolCall) error {
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
