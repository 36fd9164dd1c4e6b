package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// wrapError turns a go-openai failure into a provider error without secrets.
// ctx is the caller's context, rctx the request's (with the timeout).
func (p *OpenAI) wrapError(ctx, rctx context.Context, tap *httpTap, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return &providerError{msg: fmt.Sprintf("%s: %v", p.name, cerr), errs: []error{cerr}}
	}
	if se := p.statusError(tap, err); se != nil {
		return se
	}
	if errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return &providerError{
			msg:  fmt.Sprintf("%s: no answer within %s", p.name, p.timeout),
			errs: []error{ErrRetryable, context.DeadlineExceeded},
		}
	}
	text := p.secrets.Redact(err.Error())
	switch {
	case isTransport(err):
		return &providerError{msg: fmt.Sprintf("%s: %v: %s", p.name, errTransport, text), errs: []error{errTransport, ErrRetryable}}
	case isBadResponse(err):
		return &providerError{msg: fmt.Sprintf("%s: %v: %s", p.name, errBadResponse, text), errs: []error{errBadResponse}}
	}
	return &providerError{msg: p.name + ": " + text}
}

// statusError returns a *StatusError when the server answered with an
// error status, nil otherwise.
func (p *OpenAI) statusError(tap *httpTap, err error) *StatusError {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	se := &StatusError{Provider: p.name, RetryAfter: tap.retryAfter}
	var code any
	switch {
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode > 0:
		se.Status, se.Message, code = apiErr.HTTPStatusCode, apiErr.Message, apiErr.Code
	case errors.As(err, &reqErr) && reqErr.HTTPStatusCode > 0:
		se.Status = reqErr.HTTPStatusCode
	case tap.status >= 400:
		se.Status = tap.status
	default:
		return nil
	}
	se.ContextTooLong = contextTooLong(se.Status, code, se.Message)
	se.Message = textutil.Shorten(p.secrets.Redact(se.Message), 300)
	return se
}

// isTransport reports connection-level failures: refused, reset, cut
// bodies and streams.
func isTransport(err error) bool {
	var netErr net.Error
	var urlErr *url.Error
	return errors.As(err, &netErr) || errors.As(err, &urlErr) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, errStreamCut)
}

// isBadResponse reports answers that could not be read: invalid JSON, or
// JSON that is not a chat completion.
func isBadResponse(err error) bool {
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	return errors.As(err, &syntaxErr) || errors.As(err, &typeErr) ||
		errors.Is(err, errNoChoices) || errors.Is(err, errCallIndex)
}
