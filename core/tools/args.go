package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// emptySchema is the Parameters of a tool that takes no arguments.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// argSchema is the part of a tool's JSON Schema the registry checks before
// running it: the declared properties (keys match exactly, case included),
// the required ones and the JSON types of those that give a single one.
type argSchema struct {
	props    []string // declared property names, sorted
	open     bool     // additionalProperties: true or a schema — keys outside props pass
	required []string
	types    map[string]string // property name → JSON Schema type, when a single one is given
}

// parseSchema checks that raw is a JSON Schema for an object and extracts
// what validate needs, once, at registration.
func parseSchema(raw json.RawMessage) (argSchema, error) {
	var s struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required             []string `json:"required"`
		AdditionalProperties any      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return argSchema{}, fmt.Errorf("parameters: invalid JSON Schema: %w", err)
	}
	if s.Type != "object" {
		return argSchema{}, fmt.Errorf("parameters: type must be \"object\", not %q", s.Type)
	}
	_, extraSchema := s.AdditionalProperties.(map[string]any) // keys outside props, each checked by that schema
	out := argSchema{required: s.Required, open: s.AdditionalProperties == true || extraSchema}
	for _, name := range s.Required {
		if _, ok := s.Properties[name]; !ok {
			return argSchema{}, fmt.Errorf("parameters: required %q is not a property", name)
		}
	}
	for name, p := range s.Properties {
		out.props = append(out.props, name)
		if t, ok := p.Type.(string); ok {
			if out.types == nil {
				out.types = make(map[string]string, len(s.Properties))
			}
			out.types[name] = t
		}
	}
	slices.Sort(out.props)
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

// validate checks args (already normalised) against the schema exactly:
// a JSON object, each key declared (case included) and given once, every
// required key present and not null, every declared type respected.
func (s argSchema) validate(args json.RawMessage) error {
	if string(args) == "{}" && len(s.required) == 0 {
		return nil // the common no-argument call, without a parse
	}
	fields, err := objectFields(args)
	if err != nil {
		return err
	}
	for name := range fields {
		if err := s.known(name); err != nil {
			return err
		}
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

// known reports an error for a key the schema does not declare, naming the
// declared key it differs from only in case when there is one.
func (s argSchema) known(name string) error {
	if _, ok := slices.BinarySearch(s.props, name); ok || s.open {
		return nil
	}
	for _, p := range s.props {
		if strings.EqualFold(p, name) {
			return fmt.Errorf("unknown argument %s; expected %s", name, p)
		}
	}
	switch len(s.props) {
	case 0:
		return fmt.Errorf("unknown argument %s; this tool takes no arguments", name)
	case 1:
		return fmt.Errorf("unknown argument %s; expected %s", name, s.props[0])
	}
	return fmt.Errorf("unknown argument %s; expected one of %s", name, strings.Join(s.props, ", "))
}

// objectFields splits a JSON object into its members. Anything but one
// object, and a key given twice, is an error: json.Unmarshal would keep
// the last of two keys, which a policy rule may not have seen.
func objectFields(args json.RawMessage) (map[string]json.RawMessage, error) {
	if len(args) == 0 || args[0] != '{' {
		return nil, errNotObject
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	if _, err := dec.Token(); err != nil {
		return nil, errNotObject
	}
	fields := make(map[string]json.RawMessage)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errNotObject
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, errNotObject
		}
		if _, dup := fields[key]; dup {
			return nil, fmt.Errorf("argument %s given twice", key)
		}
		if err := nestedKeysOnce(key, v); err != nil {
			return nil, err
		}
		fields[key] = v
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, errNotObject
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errNotObject
	}
	return fields, nil
}

// nestedKeysOnce reports a key given twice in any object inside the
// argument name's value v. A schema validator sees the last of two keys;
// a server (an MCP tool) may act on the first, which nothing checked.
func nestedKeysOnce(name string, v json.RawMessage) error {
	if len(v) == 0 || (v[0] != '{' && v[0] != '[') {
		return nil
	}
	// One entry per open object or array: an object's keys seen so far
	// (nil for an array), and whether its next token is a key.
	type level struct {
		keys    map[string]bool
		wantKey bool
	}
	var open []level
	dec := json.NewDecoder(bytes.NewReader(v))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return errNotObject
		}
		var top *level
		if len(open) > 0 {
			top = &open[len(open)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if top != nil && top.keys != nil {
					top.wantKey = true // after this value, its object's next key
				}
				l := level{}
				if t == '{' {
					l = level{keys: map[string]bool{}, wantKey: true}
				}
				open = append(open, l)
			default:
				open = open[:len(open)-1]
			}
		case string:
			if top != nil && top.keys != nil && top.wantKey {
				if top.keys[t] {
					return fmt.Errorf("argument %s holds the key %q twice in one object", name, t)
				}
				top.keys[t] = true
				top.wantKey = false
				continue
			}
			if top != nil && top.keys != nil {
				top.wantKey = true
			}
		default:
			if top != nil && top.keys != nil {
				top.wantKey = true
			}
		}
	}
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

// decodeArgs unmarshals a tool's arguments object into the struct v
// strictly: every key must be one of v's json field names, case included,
// given once (json.Unmarshal alone matches keys case-insensitively).
func decodeArgs(args json.RawMessage, v any) error {
	args = normalizeArgs(args)
	fields, err := objectFields(args)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidArgs, err)
	}
	s := argSchema{props: fieldNames(v)}
	for name := range fields {
		if err := s.known(name); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidArgs, err)
		}
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidArgs, err)
	}
	return nil
}

// fieldNames lists the json names of the struct *v's fields, sorted.
func fieldNames(v any) []string {
	t := reflect.TypeOf(v).Elem()
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
