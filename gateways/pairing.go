package gateways

// Pairer is a Section whose gateway can let strangers in by pairing
// (gateways.<name>.pairing): a stranger who writes in a direct message gets
// a code, and an approver's /pair puts them on the allow list. Pairs
// reports whether the section turns it on. A gateway without strangers
// (the bot's own terminal) is no Pairer.
type Pairer interface {
	Pairs() bool
}
