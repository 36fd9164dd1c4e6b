package mcp

import (
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
)

// Bounds of a schema's pattern (RE2 matches in time linear in the input
// times the program's size): its bytes and its compiled instructions.
const (
	maxPattern      = 1024
	maxPatternInsts = 1000
)

// compilePattern compiles a schema's pattern within maxPattern and
// maxPatternInsts.
func compilePattern(p string) (*regexp.Regexp, error) {
	if len(p) > maxPattern {
		return nil, fmt.Errorf("a pattern of %d bytes, over %d", len(p), maxPattern)
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, err
	}
	if len(prog.Inst) > maxPatternInsts {
		return nil, fmt.Errorf("a pattern of %d instructions compiled, over %d", len(prog.Inst), maxPatternInsts)
	}
	return regexp.Compile(p)
}

// Keywords of a schema by the shape of their value.
var (
	schemaKeys = []string{"not", "if", "then", "else", "additionalProperties", "additionalItems",
		"contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems"}
	schemaListKeys = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaMapKeys  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	numberKeys     = []string{"minimum", "maximum", "multipleOf"}
	countKeys      = []string{"minLength", "maxLength", "minItems", "maxItems", "minProperties",
		"maxProperties", "minContains", "maxContains"}
)

// checkShape refuses a schema whose keywords do not hold what the
// validator reads (a "required" that is not a list of names, a pattern
// that does not compile, ...), at path.
func checkShape(s any, path string) error {
	m, ok := s.(map[string]any)
	if !ok {
		if _, isBool := s.(bool); isBool {
			return nil
		}
		return fmt.Errorf("%q: a schema must be an object or a boolean", "#"+path)
	}
	if err := checkShapeValues(m, path); err != nil {
		return err
	}
	for _, k := range schemaKeys {
		if x, ok := m[k]; ok {
			if err := checkShape(x, path+"/"+k); err != nil {
				return err
			}
		}
	}
	if items, ok := m["items"].([]any); ok {
		if err := checkShapeList(items, path+"/items"); err != nil {
			return err
		}
	} else if x, ok := m["items"]; ok {
		if err := checkShape(x, path+"/items"); err != nil {
			return err
		}
	}
	for _, k := range schemaListKeys {
		if x, ok := m[k]; ok {
			list, isList := x.([]any)
			if !isList {
				return fmt.Errorf("%q: want a list of schemas", "#"+path+"/"+k)
			}
			if err := checkShapeList(list, path+"/"+k); err != nil {
				return err
			}
		}
	}
	return checkShapeMaps(m, path)
}

func checkShapeList(list []any, path string) error {
	for i, x := range list {
		if err := checkShape(x, fmt.Sprintf("%s/%d", path, i)); err != nil {
			return err
		}
	}
	return nil
}

func checkShapeMaps(m map[string]any, path string) error {
	for _, k := range schemaMapKeys {
		x, ok := m[k]
		if !ok {
			continue
		}
		obj, isObj := x.(map[string]any)
		if !isObj {
			return fmt.Errorf("%q: want an object of schemas", "#"+path+"/"+k)
		}
		for name, s := range obj {
			if k == "patternProperties" {
				if _, err := compilePattern(name); err != nil {
					return fmt.Errorf("%q: %w", "#"+path+"/"+k, err)
				}
			}
			if err := checkShape(s, path+"/"+k+"/"+escapeToken(name)); err != nil {
				return err
			}
		}
	}
	if deps, ok := m["dependentRequired"]; ok {
		obj, isObj := deps.(map[string]any)
		if !isObj {
			return fmt.Errorf("%q: want an object of lists of names", "#"+path+"/dependentRequired")
		}
		for name, list := range obj {
			if !isNames(list) {
				return fmt.Errorf("%q: want a list of names", "#"+path+"/dependentRequired/"+escapeToken(name))
			}
		}
	}
	return nil
}

// checkShapeValues checks the keywords that hold values, not schemas.
func checkShapeValues(m map[string]any, path string) error {
	bad := func(k, want string) error { return fmt.Errorf("%q: want %s", "#"+path+"/"+k, want) }
	switch t := m["type"].(type) {
	case nil:
	case string:
		if !slices.Contains(typeNames, t) {
			return bad("type", "a type or a list of types")
		}
	case []any:
		if !isNames(t) || slices.ContainsFunc(t, func(x any) bool { return !slices.Contains(typeNames, x.(string)) }) {
			return bad("type", "a type or a list of types")
		}
	default:
		return bad("type", "a type or a list of types")
	}
	if r, ok := m["required"]; ok && !isNames(r) {
		return bad("required", "a list of names")
	}
	if e, ok := m["enum"]; ok {
		if _, isList := e.([]any); !isList {
			return bad("enum", "a list")
		}
	}
	for _, k := range numberKeys {
		if x, ok := m[k]; ok {
			if _, isNum := x.(float64); !isNum {
				return bad(k, "a number")
			}
		}
	}
	for _, k := range []string{"exclusiveMinimum", "exclusiveMaximum"} {
		switch m[k].(type) {
		case nil, float64, bool:
		default:
			return bad(k, "a number")
		}
	}
	for _, k := range countKeys {
		if x, ok := m[k]; ok {
			if f, isNum := x.(float64); !isNum || f < 0 || f != math.Trunc(f) {
				return bad(k, "a count")
			}
		}
	}
	for _, k := range []string{"$ref", "pattern"} {
		if x, ok := m[k]; ok {
			if _, isStr := x.(string); !isStr {
				return bad(k, "a string")
			}
		}
	}
	if p, ok := m["pattern"].(string); ok {
		if _, err := compilePattern(p); err != nil {
			return fmt.Errorf("%q: %w", "#"+path+"/pattern", err)
		}
	}
	return nil
}

// typeNames are the types a schema's "type" names.
var typeNames = []string{"null", "boolean", "object", "array", "number", "string", "integer"}

// isNames reports whether v is a list of strings.
func isNames(v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, x := range list {
		if _, ok := x.(string); !ok {
			return false
		}
	}
	return true
}
