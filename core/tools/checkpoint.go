package tools

import (
	"context"

	"github.com/gatehouse-bot/gatehouse/core"
)

// Checkpointer records the workspace before a tool that may change it runs
// (checkpoint implements it). The Registry calls it from Act for
// every tool whose Spec is not ReadOnly, built-in or not, whether a rule
// allowed the call or an approver approved it.
type Checkpointer interface {
	// Checkpoint records the workspace before a runs. note, when not
	// empty, heads the call's result: "no checkpoint: …" and why when none
	// could be made (the call runs either way), or which old checkpoints
	// were pruned to make room. release is called once the run has ended.
	Checkpoint(ctx context.Context, a core.Action) (note string, release func())
}

// checkpoint asks the Checkpointer, if any, to record the workspace before
// a changing tool runs. An unknown tool records nothing: the run refuses it.
func (r *Registry) checkpoint(ctx context.Context, a core.Action) (string, func()) {
	e := r.lookup(a.Call.Name)
	if r.opts.Checkpointer == nil || e == nil || e.spec.ReadOnly {
		return "", func() {}
	}
	note, release := r.opts.Checkpointer.Checkpoint(ctx, a)
	if release == nil {
		release = func() {}
	}
	return note, release
}

// withNote puts a checkpoint's note on a line before the output, within
// MaxOutput.
func (r *Registry) withNote(note, out string) string {
	switch {
	case note == "":
		return Truncate(out, r.opts.MaxOutput)
	case out == "":
		return Truncate(note, r.opts.MaxOutput)
	}
	note = Truncate(note, r.opts.MaxOutput/2)
	return note + "\n" + Truncate(out, r.opts.MaxOutput-len(note)-1)
}
