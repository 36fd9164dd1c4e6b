package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// emptySchema is the Parameters of a tool that takes no arguments.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// argSchema is the part of a tool's JSON Schema the registry checks before
// running it: required properties and the JSON types of declared ones.
type argSchema struct {
	required []string
	types    map[string]string // property name → JSON Schema type, when a single one is given
}

// parseSchema checks that raw is a JSON Schema for an object and extracts
// what validateArgs needs.
func parseSchema(raw json.RawMessage) (argSchema, error) {
	var s struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return argSchema{}, fmt.Errorf("parameters: invalid JSON Schema: %w", err)
	}
	if s.Type != "object" {
		return argSchema{}, fmt.Errorf("parameters: type must be \"object\", not %q", s.Type)
	}
	out := argSchema{required: s.Required}
	for _, name := range s.Required {
		if _, ok := s.Properties[name]; !ok {
			return argSchema{}, fmt.Errorf("parameters: required %q is not a property", name)
		}
	}
	for name, p := range s.Properties {
		if t, ok := p.Type.(string); ok {
			if out.types == nil {
				out.types = make(map[string]string, len(s.Properties))
			}
			out.types[name] = t
		}
	}
	return out, nil
}

// errNotObject is the complaint about arguments that are not a JSON object.
var errNotObject = errors.New("arguments must be a JSON object")

// normalizeArgs turns empty and null arguments into {}.
func normalizeArgs(args json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return json.RawMessage("{}")
	}
	return trimmed
}

// validate checks args (already normalised) against the schema.
func (s argSchema) validate(args json.RawMessage) error {
	if string(args) == "{}" && len(s.required) == 0 {
		return nil // the common no-argument call, without a parse
	}
	if args[0] != '{' || !json.Valid(args) {
		return errNotObject
	}
	if len(s.required) == 0 && len(s.types) == 0 {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return errNotObject
	}
	for _, name := range s.required {
		if v, ok := fields[name]; !ok || string(v) == "null" {
			return fmt.Errorf("missing required field %q", name)
		}
	}
	for name, v := range fields {
		if want, ok := s.types[name]; ok && string(v) != "null" && !hasType(v, want) {
			return fmt.Errorf("field %q must be a %s", name, want)
		}
	}
	return nil
}

// hasType reports whether the JSON value v is of the JSON Schema type t.
// Unknown types pass: the tool itself checks what it needs.
func hasType(v json.RawMessage, t string) bool {
	switch c := v[0]; t {
	case "string":
		return c == '"'
	case "boolean":
		return c == 't' || c == 'f'
	case "object":
		return c == '{'
	case "array":
		return c == '['
	case "number":
		return c == '-' || (c >= '0' && c <= '9')
	case "integer":
		var n json.Number
		if json.Unmarshal(v, &n) != nil {
			return false
		}
		_, err := n.Int64()
		return err == nil
	}
	return true
}
