package record

import (
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// WebLink is a one-time sign-in link of the web console: only the hex
// SHA-256 of its token is stored, so a copy of the database signs nobody
// in. It is usable once, until Expires (the store's clock).
type WebLink struct {
	Hash     string
	Identity core.Identity
	Created  time.Time
	Expires  time.Time
}

// WebSession is a signed-in browser of the web console: only the hex
// SHA-256 of the session id its cookie carries is stored. It lasts until
// Expires (the store's clock) or until it is ended.
type WebSession struct {
	Hash     string
	Identity core.Identity
	Created  time.Time
	Expires  time.Time
}

// Activity is when a conversation last had a message stored.
type Activity struct {
	Conv string
	Last time.Time
}
