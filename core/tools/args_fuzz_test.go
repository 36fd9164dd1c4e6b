package tools

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
)

// FuzzCheckArgs feeds CheckArgs what a model may propose as a call's
// arguments, for a tool with a required string and an optional integer, a
// tool without arguments and one open to any key. It must answer with an
// error wrapping ErrInvalidArgs, never panic; what it accepts is one JSON
// object honouring the schema; and what it accepts it still accepts after
// the Engine's canonicalisation.
func FuzzCheckArgs(f *testing.F) {
	for _, s := range []string{
		`{"text":"hi"}`, `{"text":"hi","n":3}`, `{"text":"hi","n":3.5}`, `{"TEXT":"hi"}`, `{"text":"a","text":"b"}`,
		`{"text":null}`, ``, `null`, `[]`, `{}`, `{"text":"hi"}}`, `{"text":"hi"} {}`, `{"n":1e3,"text":""}`,
		`{"text":"\u0000","extra":{"deep":[1,2,{"x":null}]}}`, "{\"text\":\"\xff\"}", ` {"text" : "x" } `,
	} {
		for tool := range byte(3) {
			f.Add(tool, s)
		}
	}
	r := NewRegistry(Options{Log: zerolog.Nop()})
	open := fakeTool{spec: Spec{Name: "open", Description: "Open.", ReadOnly: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"boolean"}},"additionalProperties":true}`)}}
	none := fakeTool{spec: Spec{Name: "none", Description: "None.", ReadOnly: true}}
	for _, tool := range []Tool{echo("echo"), none, open} {
		if err := r.Register(tool); err != nil {
			f.Fatalf("Register(%s): %v", tool.Spec().Name, err)
		}
	}
	names := []string{"echo", "none", "open"}
	f.Fuzz(func(t *testing.T, tool byte, args string) {
		name := names[int(tool)%len(names)]
		err := r.CheckArgs(context.Background(), name, args)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgs) {
				t.Fatalf("CheckArgs(%s, %q) = %v, not an ErrInvalidArgs", name, args, err)
			}
			return
		}
		norm := normalizeArgs(json.RawMessage(args))
		var fields map[string]json.RawMessage
		if jerr := json.Unmarshal(norm, &fields); jerr != nil || fields == nil {
			t.Fatalf("CheckArgs(%s, %q) accepted what is not one JSON object (%v)", name, args, jerr)
		}
		switch name {
		case "echo":
			var v struct {
				Text *string `json:"text"`
				N    *int64  `json:"n"`
			}
			if jerr := json.Unmarshal(norm, &v); jerr != nil || v.Text == nil {
				t.Fatalf("CheckArgs(echo, %q) accepted arguments off the schema (%v)", args, jerr)
			}
		case "none":
			if len(fields) != 0 {
				t.Fatalf("CheckArgs(none, %q) accepted arguments", args)
			}
		}
		if canon := core.CanonicalArgs(args); r.CheckArgs(context.Background(), name, canon) != nil {
			t.Fatalf("CheckArgs(%s) accepts %q but not its canonical form %q: %v", name, args, canon, r.CheckArgs(context.Background(), name, canon))
		}
	})
}
