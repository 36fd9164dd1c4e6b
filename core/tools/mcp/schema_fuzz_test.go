package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core/tools"
)

// FuzzConvertSchema feeds convertSchema the input schema an MCP server
// lists for a tool, and the tool's name, both the server's to choose, and
// then checks model arguments against it. What convertSchema accepts is an
// object schema without the keywords the OpenAI API refuses at its top,
// which the Registry registers under the name ToolName gives; CheckArgs
// then answers any arguments with nil or an ErrInvalidArgs, never a panic.
func FuzzConvertSchema(f *testing.F) {
	for _, c := range [][3]string{
		{`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`, "read_file", `{"path":"a.txt"}`},
		{`null`, "ping", ``},
		{`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n","missing"],"additionalProperties":false}`, "count", `{"n":0}`},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","oneOf":[{"required":["a"]},{"required":["b"]}],"properties":{"a":{},"b":{}}}`, "dotted.name/with spaces", `{"a":1,"b":2}`},
		{`{"type":"object","properties":{"a":true,"b":false}}`, "bools", `{"a":1}`},
		{`{"type":"object","properties":{"x":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"array","items":{"$ref":"#/$defs/x"}}}}`, "rec", `{"x":[[[]]]}`},
		{`{"type":"array"}`, "arr", `[]`},
		{`{"type":"object","allOf":[{"$ref":"#"}]}`, "loop", `{}`},
		{`{"properties":{"e":{"enum":["a","b"]}},"required":"e"}`, "😀", `{"e":"c"}`},
	} {
		f.Add(c[0], c[1], c[2])
	}
	f.Fuzz(func(t *testing.T, schema, name, args string) {
		var input any
		if json.Unmarshal([]byte(schema), &input) != nil {
			return
		}
		offered, resolved, err := convertSchema(input)
		if err != nil {
			return
		}
		var top map[string]any
		if err := json.Unmarshal(offered, &top); err != nil || top["type"] != "object" {
			t.Fatalf("convertSchema(%s) offered %s: not an object schema (%v)", schema, offered, err)
		}
		for k := range top {
			if slices.Contains(topLevelRefused, k) {
				t.Fatalf("convertSchema(%s) offered %s with %q at the top", schema, offered, k)
			}
		}
		r := tools.NewRegistry(tools.Options{Log: zerolog.Nop()})
		tl := &tool{remote: name, schema: resolved, spec: tools.Spec{Name: ToolName("srv", name), Description: "d", Parameters: offered}}
		if err := r.Register(tl); err != nil {
			t.Fatalf("Register(%q, %s) = %v, from %s", tl.spec.Name, offered, err, schema)
		}
		if err := r.CheckArgs(context.Background(), tl.spec.Name, args); err != nil && !errors.Is(err, tools.ErrInvalidArgs) {
			t.Fatalf("CheckArgs(%s) against %s = %v, not an ErrInvalidArgs", args, schema, err)
		}
	})
}

func TestConvertSchemaBooleanProperties(t *testing.T) {
	var input any
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"a":true,"b":false}}`), &input); err != nil {
		t.Fatal(err)
	}
	offered, resolved, err := convertSchema(input)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"properties":{"a":{},"b":{"not":{}}},"type":"object"}`; string(offered) != want {
		t.Errorf("offered %s, want %s", offered, want)
	}
	r := tools.NewRegistry(tools.Options{Log: zerolog.Nop()})
	tl := &tool{schema: resolved, spec: tools.Spec{Name: "mcp__srv__bools", Description: "d", Parameters: offered}}
	if err := r.Register(tl); err != nil {
		t.Fatal(err)
	}
	if err := r.CheckArgs(context.Background(), tl.spec.Name, `{"a":[1]}`); err != nil {
		t.Errorf("a (true) refused: %v", err)
	}
	if err := r.CheckArgs(context.Background(), tl.spec.Name, `{"b":1}`); !errors.Is(err, tools.ErrInvalidArgs) {
		t.Errorf("b (false) = %v, want ErrInvalidArgs", err)
	}
}
