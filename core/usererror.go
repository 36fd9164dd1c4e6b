package core

import (
	"errors"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// userError says in plain words why a turn failed. Errors of our own making
// (tool failures, refusals) are shown; infrastructure errors are classified,
// never shown raw: they can name internal hosts, resolvers or key fragments
// that have no place in a group chat. The log has the detail.
func userError(err error) string {
	switch {
	case errors.Is(err, errGiveUp), errors.Is(err, errRefused), errors.Is(err, errEmptyAnswer), errors.Is(err, errContextFull):
		return firstLine(err.Error())
	case errors.Is(err, ErrUnavailable):
		return "I'm temporarily unavailable (my database does not answer); try again in a moment."
	}
	switch llm.ErrorClass(err) {
	case "timeout":
		return "the language model took too long to answer."
	case "rate_limited":
		return "the language model is rate-limited right now; try again in a minute."
	case "server_error", "transport":
		return "the language model is unreachable right now; try again later."
	case "client_error", "bad_response":
		return "the language model rejected the request (the bot's log has the details)."
	}
	return "an internal error (the bot's log has the details)."
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			s = s[:i]
			break
		}
	}
	return textutil.Shorten(s, 300)
}
