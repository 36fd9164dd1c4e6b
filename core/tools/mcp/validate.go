package mcp

import (
	"context"
	"encoding/json"
	"fmt"
)

// Bounds of validating one call's arguments against a server's schema.
// The validator's work can grow exponentially with the arguments' nesting
// (a recursive oneOf evaluates both branches at every level, each going
// down into the value), and it cannot be stopped once started: the
// arguments are refused, with an error the model reads, before it runs.
const (
	// MaxArgsDepth is the deepest nesting of arrays and objects in a
	// call's arguments.
	MaxArgsDepth = 32
	// MaxValidationSteps caps the validator's work for one call: a walk
	// counts each schema applied to each part of the value (every branch
	// taken, so at least what the validator evaluates) and stops at this
	// many.
	MaxValidationSteps = 50_000
)

// checkEvery is how many steps of the walk pass between looks at its
// context.
const checkEvery = 1024

// Errors of arguments refused before validation.
var (
	errTooDeep     = fmt.Errorf("the arguments nest more than %d levels of arrays and objects", MaxArgsDepth)
	errTooMuchWork = fmt.Errorf("checking the arguments against the tool's schema would take more than %d steps: send them less nested or smaller", MaxValidationSteps)
)

// argSchema is a tool's input schema as the server sent it, for
// validating arguments.
type argSchema struct {
	root     any            // the decoded document
	refs     map[string]any // its "$ref"s, resolved
	patterns regexps
}

// newArgSchema returns the schema of root; its references were checked
// by checkInPlace.
func newArgSchema(root any) *argSchema {
	a := &argSchema{root: root, refs: map[string]any{}}
	c := &inPlace{root: root}
	var scan func(any)
	scan = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if target, _, err := c.deref(ref); err == nil {
					a.refs[ref] = target
				}
			}
			for _, x := range v {
				scan(x)
			}
		case []any:
			for _, x := range v {
				scan(x)
			}
		}
	}
	scan(root)
	return a
}

// Validate checks v without a deadline (see validate).
func (a *argSchema) Validate(v any) error { return a.validate(context.Background(), v) }

// validate checks v, a decoded JSON value, against the schema: its depth
// first, then the work its validation takes (a walk that ctx ending
// stops), then the schema itself.
func (a *argSchema) validate(ctx context.Context, v any) error {
	if tooDeep(v, MaxArgsDepth) {
		return errTooDeep
	}
	if _, err := a.cost(ctx, v); err != nil {
		return err
	}
	if err := a.check(a.root, v, ""); err != nil {
		return fmt.Errorf("arguments do not match the tool's schema: %w", err)
	}
	return nil
}

// tooDeep reports whether v nests arrays and objects more than levels
// deep.
func tooDeep(v any, levels int) bool {
	switch v := v.(type) {
	case map[string]any:
		if levels == 0 {
			return true
		}
		for _, x := range v {
			if tooDeep(x, levels-1) {
				return true
			}
		}
	case []any:
		if levels == 0 {
			return true
		}
		for _, x := range v {
			if tooDeep(x, levels-1) {
				return true
			}
		}
	}
	return false
}

// cost walks what validating v evaluates, every branch taken, and returns
// the steps taken: errTooMuchWork past MaxValidationSteps, ctx's error
// once it ended.
func (a *argSchema) cost(ctx context.Context, v any) (int, error) {
	w := &costWalk{ctx: ctx, refs: a.refs}
	err := w.walk(a.root, v)
	return w.steps, err
}

type costWalk struct {
	ctx   context.Context
	refs  map[string]any
	steps int
}

// Keywords whose schemas apply to an array's items (in their object form)
// and to an object's properties' values.
var (
	itemKeys = []string{"items", "additionalItems", "contains", "unevaluatedItems"}
	propKeys = []string{"additionalProperties", "unevaluatedProperties"}
)

func (w *costWalk) walk(schema, v any) error {
	if w.steps%checkEvery == 0 {
		if err := w.ctx.Err(); err != nil {
			return err
		}
	}
	if w.steps++; w.steps > MaxValidationSteps {
		return errTooMuchWork
	}
	m, ok := schema.(map[string]any)
	if !ok {
		return nil // true, false
	}
	var sub []any // the schemas that apply to v itself
	if ref, ok := m["$ref"].(string); ok {
		if target, ok := w.refs[ref]; ok {
			sub = append(sub, target)
		}
	}
	for _, k := range inPlaceKeys {
		if x, ok := m[k]; ok {
			sub = append(sub, x)
		}
	}
	for _, k := range inPlaceLists {
		list, _ := m[k].([]any)
		sub = append(sub, list...)
	}
	for _, k := range inPlaceMaps {
		obj, _ := m[k].(map[string]any)
		for _, x := range obj {
			sub = append(sub, x)
		}
	}
	for _, s := range sub {
		if err := w.walk(s, v); err != nil {
			return err
		}
	}
	switch v := v.(type) {
	case []any:
		return w.items(m, v)
	case map[string]any:
		return w.props(m, v)
	}
	return nil
}

// items walks the schemas of an array's items.
func (w *costWalk) items(m map[string]any, v []any) error {
	prefix, _ := m["prefixItems"].([]any)
	tuple, _ := m["items"].([]any) // draft-07's array form
	for i, x := range v {
		if i < len(prefix) {
			if err := w.walk(prefix[i], x); err != nil {
				return err
			}
		}
		if i < len(tuple) {
			if err := w.walk(tuple[i], x); err != nil {
				return err
			}
		}
		for _, k := range itemKeys {
			s, ok := m[k]
			if _, list := s.([]any); !ok || list {
				continue
			}
			if err := w.walk(s, x); err != nil {
				return err
			}
		}
	}
	return nil
}

// props walks the schemas of an object's properties and names.
func (w *costWalk) props(m map[string]any, v map[string]any) error {
	props, _ := m["properties"].(map[string]any)
	patterns, _ := m["patternProperties"].(map[string]any)
	names, hasNames := m["propertyNames"]
	for name, x := range v {
		if s, ok := props[name]; ok {
			if err := w.walk(s, x); err != nil {
				return err
			}
		}
		for _, s := range patterns {
			if err := w.walk(s, x); err != nil {
				return err
			}
		}
		for _, k := range propKeys {
			if s, ok := m[k]; ok {
				if err := w.walk(s, x); err != nil {
					return err
				}
			}
		}
		if hasNames {
			if err := w.walk(names, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeArgs decodes a call's arguments for validation.
func decodeArgs(args json.RawMessage) (any, error) {
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return nil, fmt.Errorf("arguments are not JSON: %w", err)
	}
	return v, nil
}
