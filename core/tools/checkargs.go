package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// CheckArgs checks a call's arguments against the named tool's schema
// before any gate sees them: they must be a JSON object whose keys are
// exactly the schema's property names (a wrongly-cased key would dodge a
// policy rule written for the right one). An unknown tool passes: the
// policy gate refuses it.
func (r *Registry) CheckArgs(name, args string) error {
	e := r.lookup(name)
	if e == nil {
		return nil
	}
	raw := normalizeArgs(json.RawMessage(args))
	if err := e.args.validate(raw); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("%s: %w", name, errNotObject)
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(e.spec.Parameters, &schema); err != nil || len(schema.Properties) == 0 {
		return nil
	}
	keys := slices.Sorted(maps.Keys(fields))
	for _, key := range keys {
		if _, ok := schema.Properties[key]; ok {
			continue
		}
		names := slices.Sorted(maps.Keys(schema.Properties))
		return fmt.Errorf("unknown argument %s; expected %s", key, strings.Join(names, ", "))
	}
	return nil
}
