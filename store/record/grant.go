package record

import (
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// Grant is a time-boxed allow ("/approve TOKEN for 30m"): until Expires,
// calls of Tool with exactly Args in the conversation Conv run without
// asking, while every workspace file the arguments name is as it was when
// the grant was given (the binding of a StandingAllow). It is numbered
// with the standing allows (one sequence: /rules and /unallow N name
// either), and it never covers more than "always" would, only for less
// long and in one conversation.
type Grant struct {
	// ID numbers the grant for /rules and /unallow, from the standing
	// allows' sequence; the store assigns it.
	ID   int64
	Tool string
	Args string
	// Conv is the key of the conversation the grant applies in: the one
	// whose request was approved.
	Conv string
	// GrantedBy is the approver who gave it: with self-approval off it
	// never covers a call that person caused.
	GrantedBy core.Identity
	Granted   time.Time
	Expires   time.Time
	// Files binds the grant as StandingAllow.Files does (never nil for a
	// grant: it was bound when given).
	Files map[string]string
}
