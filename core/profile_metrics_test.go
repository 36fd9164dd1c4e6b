package core_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// TestProfileToolOutsideCountedAsUnknown: a call of a tool the
// conversation's profile does not offer is counted as a call of a tool
// that does not exist, tool="unknown", decision="invalid", as it is
// answered (the metrics do not tell the profile's tools apart from the
// others, any more than the model's answer does).
func TestProfileToolOutsideCountedAsUnknown(t *testing.T) {
	var runs atomic.Int32
	reg := metrics.New()
	profile, opsFake := opsProfile(t)
	h := newHarness(t, harnessOpts{metrics: reg, extraTools: toolList(ranTool("deploy", &runs)),
		profiles: core.NewProfiles([]core.Profile{profile})})
	opsFake.Push(fakeoai.ToolCalls(fakeoai.Call{ID: "d", Name: "deploy", Args: `{}`}), fakeoai.Text("done"))
	h.say(t, "ops1", "deploy it")
	if got := h.gw.next(t).Text; got != "done" {
		t.Fatalf("reply = %q", got)
	}
	var b strings.Builder
	if err := reg.WritePrometheus(&b); err != nil {
		t.Fatal(err)
	}
	if want := metrics.ToolCalls + `{tool="unknown",decision="invalid"} 1`; !strings.Contains(b.String(), want+"\n") {
		t.Errorf("no %s in\n%s", want, b.String())
	}
	if strings.Contains(b.String(), `tool="deploy"`) {
		t.Errorf("the call of a tool outside the profile is counted under its name:\n%s", b.String())
	}
	if runs.Load() != 0 {
		t.Error("a tool outside the profile ran")
	}
}
