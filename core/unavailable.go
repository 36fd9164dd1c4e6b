package core

import "errors"

// ErrUnavailable is matched (errors.Is) by Submit's error when the store
// cannot take the message now (a shared store's database is unreachable):
// the message was not recorded, so the gateway must not acknowledge it to
// the platform; one that redelivers brings it again.
var ErrUnavailable = errors.New("core: the store cannot take the message now")
