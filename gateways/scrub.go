package gateways

import (
	"errors"
	"net/url"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// scrubbedError is an error whose text had a secret removed. It unwraps
// only to a cause that is itself free of secrets (a context error, a
// network error), so errors.Is keeps working and nothing can print the
// original text.
type scrubbedError struct {
	msg   string
	cause error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.cause }

// ScrubError removes every secret of set (a gateway's tokens, in any of
// their encoded forms) from err's text. An error that holds none is
// returned as it is, so the delivery layer can still classify it; one that
// does becomes an error with the redacted text that unwraps only to a
// secret-free cause (the *url.Error's underlying error, when it has none).
// Client libraries put tokens in request URLs, and so in their errors.
func ScrubError(set *secrets.Set, err error) error {
	if err == nil || !set.Leaks(err.Error()) {
		return err
	}
	var cause error
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil && !set.Leaks(ue.Err.Error()) {
		cause = ue.Err
	}
	return &scrubbedError{msg: set.Redact(err.Error()), cause: cause}
}
