package openai

import "time"

type stepKind uint8

const (
	kindText stepKind = iota + 1
	kindToolCalls
	kindStatus
	kindMalformed
	kindHang
	kindStreamCut
	kindStreamNoFinish
)

// Call is one tool call the fake model makes. Args is the arguments object
// as JSON text, sent as the API's "arguments" string.
type Call struct {
	ID   string
	Name string
	Args string
}

// Step is how the fake answers one request. Build steps with Text,
// ToolCalls, Status, Malformed, Hang, StreamCut and StreamNoFinish.
type Step struct {
	kind       stepKind
	text       string
	calls      []Call
	status     int
	retryAfter time.Duration
	message    string
	match      func(Request) bool
	chunk      int           // bytes of text per streamed chunk; 0: the text in 4 chunks
	pause      time.Duration // between streamed text chunks
	until      func() bool   // the answer is held until it returns true
}

// Text answers with an assistant message (finish_reason "stop").
func Text(s string) Step { return Step{kind: kindText, text: s} }

// ToolCalls answers with the calls in one assistant message
// (finish_reason "tool_calls").
func ToolCalls(calls ...Call) Step {
	return Step{kind: kindToolCalls, calls: append([]Call(nil), calls...)}
}

// TextThenCalls answers with an assistant message that has both text and
// tool calls (finish_reason "tool_calls"); streamed, the text comes first.
func TextThenCalls(text string, calls ...Call) Step {
	return Step{kind: kindToolCalls, text: text, calls: append([]Call(nil), calls...)}
}

// Status answers with an HTTP error status and an OpenAI-style error body;
// a positive retryAfter is sent as a Retry-After header in whole seconds
// (rounded up).
func Status(code int, retryAfter time.Duration) Step {
	return Step{kind: kindStatus, status: code, retryAfter: retryAfter}
}

// Malformed answers 200 with a body that is not valid JSON (for a streaming
// request: an event whose data is not valid JSON).
func Malformed() Step { return Step{kind: kindMalformed} }

// Hang holds the request without answering until the client gives up or
// the server closes.
func Hang() Step { return Step{kind: kindHang} }

// StreamCut starts answering (for a streaming request: a few content
// chunks, no finish_reason) and then drops the connection abruptly.
func StreamCut() Step { return Step{kind: kindStreamCut} }

// StreamNoFinish streams a few content chunks and ends the response
// cleanly, without a finish_reason and without "data: [DONE]", as a proxy
// that gives up might. For a non-streaming request it behaves as Text.
func StreamNoFinish() Step {
	return Step{kind: kindStreamNoFinish, text: "partial answer that never finishes"}
}

// When restricts the step to requests for which match returns true: a
// request takes the first queued step that matches it, so concurrent
// conversations can be scripted deterministically. match runs under the
// server's lock: it must not call the Server.
func (s Step) When(match func(Request) bool) Step {
	s.match = match
	return s
}

// Until holds the answer until ready returns true (checked every few
// milliseconds), the request is cancelled or the server closes: a model
// that takes as long as the test needs, for example until the chat shows
// "typing…". ready runs outside the server's lock.
func (s Step) Until(ready func() bool) Step {
	s.until = ready
	return s
}

// WithMessage sets the error message of a Status step (for example to
// echo a credential, as some servers do, to test that clients hide it).
func (s Step) WithMessage(msg string) Step {
	s.message = msg
	return s
}

// Chunked makes a streamed answer send its text in chunks of size bytes
// (cut on rune boundaries), waiting pause between two chunks, as a model
// that writes slowly does. A non-streamed answer is unchanged.
func (s Step) Chunked(size int, pause time.Duration) Step {
	s.chunk, s.pause = size, pause
	return s
}
