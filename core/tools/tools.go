// Package tools defines the tool interface, the registry that enforces
// timeouts and output caps, and the built-in tools.
package tools

import (
	"context"
	"encoding/json"
	"time"
)

// Spec describes a tool.
type Spec struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments object.
	Parameters json.RawMessage
	// ReadOnly tools change nothing outside the bot; the default policy
	// allows them without approval.
	ReadOnly bool
	// Timeout bounds one run; zero means the registry's default.
	Timeout time.Duration
}

// Tool is something the agent can call.
type Tool interface {
	Spec() Spec
	// Run executes the tool with its JSON arguments. An error is reported to
	// the LLM as the tool's result; it never stops the bot.
	Run(ctx context.Context, args json.RawMessage) (string, error)
}

// ArgsValidator is implemented by a tool whose schema says more than the
// registry's own check reads (an MCP server's arbitrary JSON Schema): the
// registry calls ValidateArgs, after its own check, wherever it checks
// arguments (CheckArgs, before any gate, and Run), with the normalised
// arguments object. An error is reported as ErrInvalidArgs.
type ArgsValidator interface {
	ValidateArgs(ctx context.Context, args json.RawMessage) error
}
