package record

import (
	"errors"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// PairingCode is a pairing code handed to a stranger: an approver's
// "/pair Code" puts Identity on its gateway's allow list.
type PairingCode struct {
	Identity core.Identity
	// Conv is the conversation key the code was handed out in (a direct
	// message): the newcomer is told there once paired.
	Conv string
	// Code is the code as the stranger was given it; Hash is the hex
	// SHA-256 of Code, by which /pair finds it.
	Code    string
	Hash    string
	Created time.Time
	Expires time.Time
}

// Pairing is an identity paired by an approver's /pair.
type Pairing struct {
	Identity core.Identity
	Conv     string        // where the code was handed out (PairingCode.Conv)
	By       core.Identity // the approver who sent /pair
	At       time.Time
}

// ErrPaired is a store's answer to a pairing code asked for an identity
// that is paired already: the caller lets it in, it needs no code.
var ErrPaired = errors.New("record: identity is paired already")
