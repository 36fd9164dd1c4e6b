package core

import (
	"context"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// ToolCatalog is what the Engine and the policy need to know of the tools
// (the core/tools Registry implements it; the Registry is also registered as
// the ToolActuator that runs them).
type ToolCatalog interface {
	// Specs returns the tool descriptions offered to the LLM. The slice is
	// shared: callers must not modify it.
	Specs() []llm.ToolSpec
	// ReadOnly reports whether the tool is read-only, and whether it exists.
	ReadOnly(name string) (readOnly, known bool)
	// CheckArgs checks a proposed call's arguments (in canonical form)
	// strictly against the tool's schema. The Engine calls it before any
	// gate: an error becomes the call's result for the LLM and nothing is
	// run or held.
	CheckArgs(ctx context.Context, name, args string) error
}
