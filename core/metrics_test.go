package core_test

import (
	"strings"
	"testing"

	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// TestToolCallsCountedWhenRefusedForTheirArguments: a call of a tool that
// is not registered counts as tool="unknown" (the model's text never
// becomes a label), and a call whose arguments do not fit its tool counts
// under the tool; both with decision="invalid".
func TestToolCallsCountedWhenRefusedForTheirArguments(t *testing.T) {
	reg := metrics.New()
	h := newHarness(t, harnessOpts{metrics: reg})
	h.fake().Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: "u", Name: "launch_missiles", Args: `{}`},
			fakeoai.Call{ID: "bad", Name: "echo", Args: `{"text": oops`},
			fakeoai.Call{ID: "ok", Name: "echo", Args: `{"text":"ping"}`}),
		fakeoai.Text("done"),
	)
	h.say(t, "c1", "go")
	if got := h.gw.next(t); got.Text != "done" {
		t.Fatalf("reply = %q", got.Text)
	}
	var b strings.Builder
	if err := reg.WritePrometheus(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		metrics.ToolCalls + `{tool="unknown",decision="invalid"} 1`,
		metrics.ToolCalls + `{tool="echo",decision="invalid"} 1`,
		metrics.ToolCalls + `{tool="echo",decision="allow"} 1`,
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("no %s in\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "launch_missiles") {
		t.Error("the model's tool name became a label value")
	}
}
