package core_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/tools"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// openTool is a tool whose schema takes any key, as an MCP tool's may: the
// registry checks no nested object of its arguments against a property.
type openTool struct{ ran *atomic.Int32 }

func (o openTool) Spec() tools.Spec {
	return tools.Spec{Name: "open", Description: "takes any arguments",
		Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"additionalProperties":true}`)}
}

func (o openTool) Run(context.Context, json.RawMessage) (string, error) {
	o.ran.Add(1)
	return "ran", nil
}

// TestRepeatedKeysAreRefusedBeforeTheGates: a key given twice, at any
// depth, is refused to the model with a reason naming the key: the call is
// neither run nor held. Canonicalising first kept the last copy, so
// {"command":"echo FIRST","command":"echo SECOND"} was held and run as the
// second.
func TestRepeatedKeysAreRefusedBeforeTheGates(t *testing.T) {
	cases := []struct{ name, args, key string }{
		{"top level", `{"command":"echo FIRST","command":"echo SECOND"}`, `"command"`},
		{"nested object", `{"command":"ls","env":{"A":"1","B":"2","A":"3"}}`, `"A"`},
		{"object in an array", `{"command":"ls","steps":[{"x":1},{"y":1,"y":2}]}`, `"y"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ran atomic.Int32
			h, b := brokerHarness(t, harnessOpts{extraTools: []tools.Tool{openTool{ran: &ran}},
				rules: []core.Rule{{Tool: "open", Decision: core.NeedsApproval}}})
			h.fake().Push(fakeoai.ToolCalls(fakeoai.Call{ID: "o", Name: "open", Args: c.args}), fakeoai.Text("understood"))
			h.say(t, "c1", "run it")
			if got := h.gw.next(t).Text; got != "understood" {
				t.Fatalf("reply = %q", got)
			}
			if ran.Load() != 0 || b.holds() != 0 {
				t.Fatalf("a call with a repeated key ran (%d) or was held (%d)", ran.Load(), b.holds())
			}
			m := lastMessage(t, h.fake(), 1)
			if m.Role != "tool" || !strings.HasPrefix(m.Content, "error:") || !strings.Contains(m.Content, c.key) ||
				!strings.Contains(m.Content, "twice") {
				t.Fatalf("tool result = %+v; want an error naming %s given twice", m, c.key)
			}
		})
	}
}

// TestCanonicalArgsKeepsRepeatedKeys: arguments with a key given twice are
// not canonicalised (that would keep one copy and hide the other); they
// come back as they are, and RepeatedKey names the key and where it is.
func TestCanonicalArgsKeepsRepeatedKeys(t *testing.T) {
	cases := []struct{ args, err string }{
		{`{"a":1,"a":2}`, `key "a" given twice at the top level`},
		{`{"a":{"b":1,"c":{"d":1,"d":2}}}`, `key "d" given twice in the object at a.c`},
		{`{"a":[{"b":1},{"b":1,"b":2}]}`, `key "b" given twice in the object at a[1]`},
		{`{"a":[[{"":1,"":2}]]}`, `key "" given twice in the object at a[0][0]`},
		{`{"a\"b":{"x":1,"x":1}}`, `key "x" given twice in the object at "a\"b"`},
	}
	for _, c := range cases {
		if got := core.CanonicalArgs(c.args); got != c.args {
			t.Errorf("CanonicalArgs(%s) = %s; want it unchanged", c.args, got)
		}
		err := core.RepeatedKey(c.args)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("RepeatedKey(%s) = %v; want %q", c.args, err, c.err)
		}
	}
	for _, ok := range []string{``, `{}`, `{"a":1,"b":{"a":1}}`, `[{"a":1},{"a":2}]`, `{"a":"a","b":["a","a"]}`, `{"a":`, `not json`} {
		if err := core.RepeatedKey(ok); err != nil {
			t.Errorf("RepeatedKey(%s) = %v; want nil", ok, err)
		}
	}
}
