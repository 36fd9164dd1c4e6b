package core

import "errors"

// ErrUnavailable is matched (errors.Is) by Submit's error when the message
// cannot be taken now because the store is unreachable: the gateway does not
// acknowledge it where the platform redelivers, and otherwise tells the
// sender to try again.
var ErrUnavailable = errors.New("core: temporarily unavailable")
