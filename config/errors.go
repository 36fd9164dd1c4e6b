package config

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gatehouse-bot/gatehouse/internal/confkit"
)

// Error is a configuration error. Its message names the key and, where
// known, the file and line:
//
//	config: llm.timeout: bad duration "5x" (config.yaml:7)
//
// It never contains a secret value.
type Error struct {
	// File is the configuration file's path; empty for Parse.
	File string
	// Key is the full dotted key path, "llm.providers[0].base_url"; empty
	// for errors about the file as a whole (syntax, reading).
	Key string
	// Line is the 1-based line in the file, 0 when unknown.
	Line int
	// Msg says what is wrong.
	Msg string

	err error // the underlying error, for errors.Is (fs.ErrNotExist)
}

// Error formats the error on one line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, " (%s:%d)", e.File, e.Line)
	case e.File != "":
		fmt.Fprintf(&b, " (%s)", e.File)
	case e.Line > 0:
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	return b.String()
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.err }

// maxQuoted bounds how much of a bad value an error message repeats.
const maxQuoted = 40

// quote returns a bad value for an error message: shortened, and masked
// when it looks like an API key.
func quote(s string) string { return confkit.Quote(s) }

// kindName names what a node holds, for "want X, got Y" messages. It never
// repeats a scalar's value: it could be a misplaced secret.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a scalar"
	}
	return "nothing"
}
