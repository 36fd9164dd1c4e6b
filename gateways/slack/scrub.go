package slack

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

// scrub removes the tokens and the signing secret from err's text.
func (g *Gateway) scrub(err error) error { return scrubError(g.secrets, err) }

func scrubError(set *secrets.Set, err error) error {
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
