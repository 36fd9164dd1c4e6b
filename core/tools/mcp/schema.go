package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
)

// topLevelRefused are the JSON Schema keywords the OpenAI API refuses at
// the top of a function's parameters. They are left out of the schema
// offered to the model; arguments are still validated against all of them.
var topLevelRefused = []string{"$schema", "$id", "oneOf", "anyOf", "allOf", "not", "enum"}

// maxSchema caps the size of a tool's input schema as the server sends it:
// the schema goes to the model in every request, so one server could
// otherwise make each request as large as it likes. A larger one keeps
// the tool out.
const maxSchema = 32 << 10

// convertSchema returns the schema of a tool's arguments as offered to the
// model (an object schema the OpenAI API and the Registry accept) and the
// server's full schema resolved for validation. A schema whose validation
// would not end, or would take too long, is refused (see checkInPlace).
func convertSchema(input any) (json.RawMessage, *argSchema, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	if string(raw) == "null" {
		raw = []byte(`{"type":"object"}`)
	}
	if len(raw) > maxSchema {
		return nil, nil, fmt.Errorf("input schema: %d bytes, over the %d KiB a tool may add to every request to the model", len(raw), maxSchema>>10)
	}
	var m, orig map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, nil, fmt.Errorf("input schema: not a JSON object")
	}
	// Before m is changed: the validator follows the server's whole schema.
	if err := checkShape(m, ""); err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	if err := checkInPlace(m); err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	if err := json.Unmarshal(raw, &orig); err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	if t, ok := m["type"]; ok && t != "object" {
		return nil, nil, fmt.Errorf("input schema: type must be \"object\", not %v", t)
	}
	m["type"] = "object"
	for _, k := range topLevelRefused {
		delete(m, k)
	}
	props, _ := m["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		m["properties"] = props
	}
	// A property's schema may be a boolean (true: anything, false:
	// nothing). The Registry reads each as an object: offer the same
	// meaning in that form, or one such property would keep all of the
	// server's tools out.
	for name, p := range props {
		if b, ok := p.(bool); ok {
			props[name] = map[string]any{}
			if !b {
				props[name] = map[string]any{"not": map[string]any{}}
			}
		}
	}
	if req, ok := m["required"].([]any); ok {
		kept := slices.DeleteFunc(slices.Clone(req), func(v any) bool {
			s, ok := v.(string)
			_, declared := props[s]
			return !ok || !declared
		})
		if len(kept) == 0 {
			delete(m, "required")
		} else {
			m["required"] = kept
		}
	}
	offered, err := json.Marshal(m)
	if err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	return offered, newArgSchema(orig), nil
}
