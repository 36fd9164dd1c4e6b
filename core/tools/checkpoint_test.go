package tools

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// recordingCheckpointer records the calls it was asked to checkpoint and
// whether each run had ended (released) by the next.
type recordingCheckpointer struct {
	mu       sync.Mutex
	calls    []core.Action
	held     int // runs between Checkpoint and release
	note     string
	duringOK bool
}

func (c *recordingCheckpointer) Checkpoint(_ context.Context, a core.Action) (string, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, a)
	c.held++
	return c.note, func() {
		c.mu.Lock()
		c.held--
		c.mu.Unlock()
	}
}

// TestActCheckpointsChangingToolsOnly: the Checkpointer is asked before a
// tool that is not ReadOnly runs (with the action's approval), never
// before a read-only or unknown one; the run happens while it holds the
// workspace, and its note heads the result.
func TestActCheckpointsChangingToolsOnly(t *testing.T) {
	cp := &recordingCheckpointer{}
	changer := fakeTool{spec: Spec{Name: "changer", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}}
	changer.run = func(context.Context, json.RawMessage) (string, error) {
		cp.mu.Lock()
		defer cp.mu.Unlock()
		cp.duringOK = cp.held == 1
		return "changed", nil
	}
	r := newTestRegistry(t, Options{Checkpointer: cp}, echo("reader"), changer)
	act(t, r, "reader", `{"text":"x"}`)
	act(t, r, "nosuch", `{}`)
	if len(cp.calls) != 0 {
		t.Fatalf("checkpointed %d read-only or unknown calls", len(cp.calls))
	}
	res, err := r.Act(context.Background(), core.Action{Kind: core.ActionTool, Approval: "K7Q2MX9P",
		Call: llm.ToolCall{Name: "changer", Args: `{}`}})
	if err != nil || res.Output != "changed" {
		t.Fatalf("Act: %+v %v", res, err)
	}
	if len(cp.calls) != 1 || cp.calls[0].Approval != "K7Q2MX9P" || !cp.duringOK || cp.held != 0 {
		t.Fatalf("calls %+v, held during run %v, held after %d", cp.calls, cp.duringOK, cp.held)
	}
	cp.note = "no checkpoint: big.iso is 20 MiB, over tools.checkpoints.max_file (16 MiB)"
	res = act(t, r, "changer", `{}`)
	if !strings.HasPrefix(res.Output, cp.note+"\nchanged") {
		t.Fatalf("output %q does not start with the note", res.Output)
	}
}
