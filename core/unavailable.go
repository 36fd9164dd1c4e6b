package core

import "errors"

// ErrUnavailable is matched (errors.Is) by Submit's error when the store
// cannot take the message now (a shared store's database is unreachable):
// the message was not recorded, so the gateway does not acknowledge it where
// the platform redelivers, and otherwise tells the sender to try again.
var ErrUnavailable = errors.New("core: temporarily unavailable")
