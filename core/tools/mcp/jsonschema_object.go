package mcp

import (
	"fmt"
	"sort"
)

func (a *argSchema) checkObject(m map[string]any, v map[string]any, path string) error {
	if err := checkCount(m, len(v), "minProperties", "maxProperties", "properties", path); err != nil {
		return err
	}
	if err := checkRequired(m["required"], v, path); err != nil {
		return err
	}
	if err := a.checkDependencies(m, v, path); err != nil {
		return err
	}
	props, _ := m["properties"].(map[string]any)
	patterns, _ := m["patternProperties"].(map[string]any)
	additional, hasAdditional := m["additionalProperties"]
	unevaluated, hasUnevaluated := m["unevaluatedProperties"]
	var evaluated map[string]bool
	if hasUnevaluated && !hasAdditional {
		evaluated = a.evaluatedNames(m, v)
	}
	names, _ := m["propertyNames"]
	for _, name := range sortedKeys(v) {
		x, p := v[name], elem(path, name)
		if names != nil {
			if err := a.check(names, name, p); err != nil {
				return fmt.Errorf("the property's name: %w", err)
			}
		}
		s, known := props[name]
		if known {
			if err := a.check(s, x, p); err != nil {
				return err
			}
		}
		matched, err := a.checkPatterns(patterns, name, x, p)
		if err != nil {
			return err
		}
		switch {
		case known || matched:
		case hasAdditional:
			if err := a.check(additional, x, p); err != nil {
				return err
			}
		case hasUnevaluated && !evaluated[name]:
			if err := a.check(unevaluated, x, p); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys(v map[string]any) []string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func checkRequired(req any, v map[string]any, path string) error {
	list, _ := req.([]any)
	for _, r := range list {
		if name, ok := r.(string); ok {
			if _, present := v[name]; !present {
				return fail(path, "missing the required property %q", name)
			}
		}
	}
	return nil
}

// checkPatterns checks x against the schema of every pattern its name
// matches, and reports whether one did.
func (a *argSchema) checkPatterns(patterns map[string]any, name string, x any, path string) (bool, error) {
	matched := false
	for pattern, s := range patterns {
		re, err := a.patterns.get(pattern)
		if err != nil {
			return false, fail(path, "%v", err)
		}
		if !re.MatchString(name) {
			continue
		}
		matched = true
		if err := a.check(s, x, path); err != nil {
			return true, err
		}
	}
	return matched, nil
}

// checkDependencies checks dependentRequired, dependentSchemas and
// draft-07's dependencies (either).
func (a *argSchema) checkDependencies(m map[string]any, v map[string]any, path string) error {
	for _, k := range []string{"dependentRequired", "dependentSchemas", "dependencies"} {
		deps, _ := m[k].(map[string]any)
		for name, d := range deps {
			if _, present := v[name]; !present {
				continue
			}
			var err error
			if list, ok := d.([]any); ok {
				err = checkRequired(list, v, path)
			} else if k != "dependentRequired" {
				err = a.check(d, v, path)
			}
			if err != nil {
				return fmt.Errorf("as %q is present: %w", name, err)
			}
		}
	}
	return nil
}

// evaluatedNames are the names of v that m or a subschema applied in
// place names in properties or patternProperties.
func (a *argSchema) evaluatedNames(m map[string]any, v map[string]any) map[string]bool {
	out := map[string]bool{}
	a.inPlace(m, func(s map[string]any) {
		props, _ := s["properties"].(map[string]any)
		patterns, _ := s["patternProperties"].(map[string]any)
		for name := range v {
			if _, ok := props[name]; ok {
				out[name] = true
			}
			for p := range patterns {
				if re, err := a.patterns.get(p); err == nil && re.MatchString(name) {
					out[name] = true
				}
			}
		}
	})
	return out
}

// maxInPlaceDepth bounds inPlace's walk; checkInPlace already refused the
// schemas whose walk would not end.
const maxInPlaceDepth = 64

// inPlace calls fn with m and each schema applied in place under it:
// $ref, allOf, anyOf, oneOf, if, then, else, dependentSchemas.
func (a *argSchema) inPlace(m map[string]any, fn func(map[string]any)) {
	var walk func(any, int)
	walk = func(s any, depth int) {
		sm, ok := s.(map[string]any)
		if !ok || depth > maxInPlaceDepth {
			return
		}
		fn(sm)
		if ref, ok := sm["$ref"].(string); ok {
			walk(a.refs[ref], depth+1)
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			list, _ := sm[k].([]any)
			for _, x := range list {
				walk(x, depth+1)
			}
		}
		for _, k := range []string{"if", "then", "else"} {
			walk(sm[k], depth+1)
		}
		deps, _ := sm["dependentSchemas"].(map[string]any)
		for _, x := range deps {
			walk(x, depth+1)
		}
	}
	walk(m, 0)
}

// checkCombined checks allOf, anyOf, oneOf, not and if/then/else.
func (a *argSchema) checkCombined(m map[string]any, v any, path string) error {
	if list, ok := m["allOf"].([]any); ok {
		for _, s := range list {
			if err := a.check(s, v, path); err != nil {
				return err
			}
		}
	}
	if list, ok := m["anyOf"].([]any); ok {
		var first error
		for _, s := range list {
			if first = a.check(s, v, path); first == nil {
				break
			}
		}
		if first != nil {
			return fmt.Errorf("no schema of anyOf matches: %w", first)
		}
	}
	if list, ok := m["oneOf"].([]any); ok {
		n := 0
		for _, s := range list {
			if a.check(s, v, path) == nil {
				n++
			}
		}
		if n != 1 {
			return fail(path, "want exactly one schema of oneOf to match, not %d", n)
		}
	}
	if s, ok := m["not"]; ok && a.check(s, v, path) == nil {
		return fail(path, "matches a schema it must not (not)")
	}
	if s, ok := m["if"]; ok {
		branch := "else"
		if a.check(s, v, path) == nil {
			branch = "then"
		}
		if b, ok := m[branch]; ok {
			return a.check(b, v, path)
		}
	}
	return nil
}
