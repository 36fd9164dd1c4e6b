package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// StatusError is an HTTP error answer from a provider's API. It is
// ErrRetryable for 408, 429 and 5xx. RetryAfter is the server's Retry-After
// (zero when it sent none).
type StatusError struct {
	Provider   string
	Status     int
	RetryAfter time.Duration
	// Message is the server's error message with secrets removed.
	Message string
	// ContextTooLong is set when the server said the request is longer
	// than the model's context (see ErrContextTooLong).
	ContextTooLong bool
}

// ErrContextTooLong marks a request the model refused because the
// conversation is longer than its context window. Asking another provider
// or asking again the same way will not help: the caller shortens the
// conversation first. The Cascade returns it at once, without trying the
// next provider.
var ErrContextTooLong = errors.New("llm: context too long")

// contextTooLong reports whether an error answer says the context window
// is exceeded: the code OpenAI sends, or a 400 whose message says so, as
// OpenAI-compatible servers (vLLM, llama.cpp, proxies) word it.
func contextTooLong(status int, code any, message string) bool {
	if c, ok := code.(string); ok && c == "context_length_exceeded" {
		return true
	}
	if status != http.StatusBadRequest {
		return false
	}
	m := strings.ToLower(message)
	for _, s := range []string{"maximum context length", "context_length_exceeded", "context length exceeded", "exceeds the available context size"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// Error describes the status without secrets.
func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s: HTTP %d %s", e.Provider, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return msg
}

// Is reports whether the status makes the error retryable, and whether it
// is ErrContextTooLong.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrRetryable:
		return retryableStatus(e.Status)
	case ErrContextTooLong:
		return e.ContextTooLong
	}
	return false
}

func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// Markers that classify provider errors; see ErrorClass.
var (
	errTransport   = errors.New("transport error")
	errBadResponse = errors.New("bad response")
)

// providerError is a provider failure whose text was built without secrets.
// It unwraps to marker errors only, never to a library error whose text
// might carry a secret.
type providerError struct {
	msg  string
	errs []error
}

func (e *providerError) Error() string   { return e.msg }
func (e *providerError) Unwrap() []error { return e.errs }

// ErrorClass names the kind of a provider error for logs and metrics:
// "none", "canceled", "timeout", "rate_limited", "context_too_long", "server_error",
// "client_error", "transport", "bad_response" or "other".
func ErrorClass(err error) string {
	if err == nil {
		return "none"
	}
	var se *StatusError
	if errors.As(err, &se) {
		switch {
		case se.ContextTooLong:
			return "context_too_long"
		case se.Status == http.StatusTooManyRequests:
			return "rate_limited"
		case se.Status >= 500:
			return "server_error"
		}
		return "client_error"
	}
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, errTransport):
		return "transport"
	case errors.Is(err, errBadResponse):
		return "bad_response"
	}
	return "other"
}
