package app

import (
	"errors"
	"fmt"
)

// ErrConfig marks a start-up error that is the configuration's fault (no
// gateway anybody could talk to, no approver on an enabled gateway, an
// unsupported store driver): fixing the configuration fixes it, so cmd/bot
// exits with its usage code (2), and nothing was created or connected
// before it was found.
var ErrConfig = errors.New("configuration error")

// configError is an error that matches ErrConfig without repeating its
// text in the message.
type configError struct{ msg string }

func (e *configError) Error() string        { return e.msg }
func (e *configError) Is(target error) bool { return target == ErrConfig }

func configErrorf(format string, args ...any) error {
	return &configError{msg: fmt.Sprintf(format, args...)}
}
