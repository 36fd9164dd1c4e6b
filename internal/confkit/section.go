package confkit

// Section is one gateway's section of the configuration, gateways.<name>,
// as the gateway's own package defines it: a pointer to a struct with yaml
// tags, holding its defaults before decoding. config decodes it
// strictly like the rest of the file (unknown keys are errors naming the
// key), then calls Check.
type Section interface {
	// Enabled reports whether the gateway runs: credentials set and not
	// disabled (a gateway without credentials: not disabled).
	Enabled() bool
	// Check validates the section and fills values derived from others;
	// c's keys are relative to gateways.<name>.
	Check(c *Checker, g Globals)
	// Secrets returns every secret field of the section, set or not.
	Secrets() []Secret
	// URLs returns the section's URLs, which may carry credentials in their
	// user info (https://user:password@proxy).
	URLs() []string
	// Allow returns who may talk to the bot on this gateway: identities,
	// conversation keys or bare ids (see core's allow lists).
	Allow() []string
}

// Globals are the values outside its own section that a section's checks
// may depend on.
type Globals struct {
	// HTTPListen is http.listen; empty when the HTTP server is off.
	HTTPListen string
}

// Spec is one gateway as the gateway table lists it for the configuration.
type Spec struct {
	// Name is the section's key under gateways and the first part of the
	// gateway's identities and conversation keys.
	Name string
	// New returns a fresh section holding its defaults.
	New func() Section
	// DefaultApprovers are identities that approve when hitl.approvers is
	// absent (a terminal gateway's local user).
	DefaultApprovers []string
	// EnvPrefixes are the prefixes of the environment variables the
	// gateway's settings come from ("<NAME>_"); the shell tool keeps them
	// from commands.
	EnvPrefixes []string
	// Setup is what `bot init` asks about the gateway; nil when it asks
	// nothing (the gateway needs no credentials).
	Setup *Setup
}
