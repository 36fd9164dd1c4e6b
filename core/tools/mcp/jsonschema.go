package mcp

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/core/tools"
)

// This file validates a decoded JSON value against a decoded JSON Schema
// (draft 2020-12, with the draft-07 forms tools still send: items as an
// array, additionalItems, dependencies, exclusiveMinimum as a boolean).
// Its work is bounded before it runs (checkInPlace, MaxArgsDepth,
// MaxValidationSteps). "format" is an annotation, as by default in 2020-12;
// unevaluatedProperties and unevaluatedItems count as evaluated what any
// subschema applied in place names (a lenient reading: the server checks
// again).

// regexps caches the compiled patterns of the schemas.
type regexps struct {
	mu sync.Mutex
	m  map[string]*regexp.Regexp
}

func (r *regexps) get(pattern string) (*regexp.Regexp, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if re, ok := r.m[pattern]; ok {
		return re, nil
	}
	re, err := compilePattern(pattern)
	if err != nil {
		return nil, fmt.Errorf("the schema's pattern %q: %w", tools.Truncate(pattern, 80), err)
	}
	if r.m == nil {
		r.m = map[string]*regexp.Regexp{}
	}
	r.m[pattern] = re
	return re, nil
}

// fail is a validation error at path (a JSON Pointer into the value).
func fail(path, format string, args ...any) error {
	where := "the arguments"
	if path != "" {
		where = strconv.Quote(path)
	}
	return fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...))
}

// check validates v at path against schema.
func (a *argSchema) check(schema, v any, path string) error {
	m, ok := schema.(map[string]any)
	if !ok {
		if b, isBool := schema.(bool); isBool && !b {
			return fail(path, "no value is allowed here")
		}
		return nil
	}
	if ref, ok := m["$ref"].(string); ok {
		if target, ok := a.refs[ref]; ok {
			if err := a.check(target, v, path); err != nil {
				return err
			}
		}
	}
	if err := checkType(m["type"], v, path); err != nil {
		return err
	}
	if err := checkValues(m, v, path); err != nil {
		return err
	}
	var err error
	switch v := v.(type) {
	case float64:
		err = checkNumber(m, v, path)
	case string:
		err = a.checkString(m, v, path)
	case []any:
		err = a.checkArray(m, v, path)
	case map[string]any:
		err = a.checkObject(m, v, path)
	}
	if err != nil {
		return err
	}
	return a.checkCombined(m, v, path)
}

// typeOf names v's JSON type as a schema's "type" does; a number with no
// fraction is both "integer" and "number".
func typeMatches(want string, v any) bool {
	switch v := v.(type) {
	case nil:
		return want == "null"
	case bool:
		return want == "boolean"
	case float64:
		return want == "number" || (want == "integer" && v == math.Trunc(v) && !math.IsInf(v, 0))
	case string:
		return want == "string"
	case []any:
		return want == "array"
	case map[string]any:
		return want == "object"
	}
	return false
}

func checkType(t, v any, path string) error {
	var names []string
	switch t := t.(type) {
	case string:
		names = []string{t}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				names = append(names, s)
			}
		}
	default:
		return nil
	}
	for _, n := range names {
		if typeMatches(n, v) {
			return nil
		}
	}
	return fail(path, "want type %s", strings.Join(names, " or "))
}

// canonical is v as JSON with sorted keys, for comparing values.
func canonical(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// checkValues checks enum and const.
func checkValues(m map[string]any, v any, path string) error {
	if c, ok := m["const"]; ok && canonical(c) != canonical(v) {
		return fail(path, "want the value %s", tools.Truncate(canonical(c), 80))
	}
	enum, ok := m["enum"].([]any)
	if !ok {
		return nil
	}
	cv := canonical(v)
	for _, e := range enum {
		if canonical(e) == cv {
			return nil
		}
	}
	return fail(path, "want one of %s", tools.Truncate(canonical(enum), 200))
}

func num(m map[string]any, k string) (float64, bool) {
	f, ok := m[k].(float64)
	return f, ok
}

func checkNumber(m map[string]any, v float64, path string) error {
	if min, ok := num(m, "minimum"); ok {
		if ex, _ := m["exclusiveMinimum"].(bool); ex && v <= min {
			return fail(path, "want more than %v", min)
		} else if v < min {
			return fail(path, "want at least %v", min)
		}
	}
	if max, ok := num(m, "maximum"); ok {
		if ex, _ := m["exclusiveMaximum"].(bool); ex && v >= max {
			return fail(path, "want less than %v", max)
		} else if v > max {
			return fail(path, "want at most %v", max)
		}
	}
	if min, ok := num(m, "exclusiveMinimum"); ok && v <= min {
		return fail(path, "want more than %v", min)
	}
	if max, ok := num(m, "exclusiveMaximum"); ok && v >= max {
		return fail(path, "want less than %v", max)
	}
	if d, ok := num(m, "multipleOf"); ok && d > 0 {
		if q := v / d; math.Abs(q-math.Round(q)) > 1e-9*math.Max(1, math.Abs(q)) {
			return fail(path, "want a multiple of %v", d)
		}
	}
	return nil
}

func (a *argSchema) checkString(m map[string]any, v, path string) error {
	n := utf8.RuneCountInString(v)
	if min, ok := num(m, "minLength"); ok && float64(n) < min {
		return fail(path, "want at least %v characters", min)
	}
	if max, ok := num(m, "maxLength"); ok && float64(n) > max {
		return fail(path, "want at most %v characters", max)
	}
	if p, ok := m["pattern"].(string); ok {
		re, err := a.patterns.get(p)
		if err != nil {
			return fail(path, "%v", err)
		}
		if !re.MatchString(v) {
			return fail(path, "want a match of %q", tools.Truncate(p, 80))
		}
	}
	return nil
}

// checkCount checks the size of an array or object against the keywords
// min and max.
func checkCount(m map[string]any, n int, min, max, what, path string) error {
	if lo, ok := num(m, min); ok && float64(n) < lo {
		return fail(path, "want at least %v %s", lo, what)
	}
	if hi, ok := num(m, max); ok && float64(n) > hi {
		return fail(path, "want at most %v %s", hi, what)
	}
	return nil
}

// elem is the path of a part of the value.
func elem(path, key string) string {
	return path + "/" + escapeToken(key)
}

func (a *argSchema) checkArray(m map[string]any, v []any, path string) error {
	if err := checkCount(m, len(v), "minItems", "maxItems", "items", path); err != nil {
		return err
	}
	if u, _ := m["uniqueItems"].(bool); u {
		seen := map[string]bool{}
		for _, x := range v {
			c := canonical(x)
			if seen[c] {
				return fail(path, "want unique items; %s is repeated", tools.Truncate(c, 80))
			}
			seen[c] = true
		}
	}
	prefix, _ := m["prefixItems"].([]any)
	rest, restKey := m["items"], "items"
	if tuple, ok := m["items"].([]any); ok { // draft-07
		prefix, rest, restKey = tuple, m["additionalItems"], "additionalItems"
	}
	_, hasRest := m[restKey]
	unevaluated, hasUnevaluated := m["unevaluatedItems"]
	evaluated := len(v)
	if hasUnevaluated && !hasRest {
		evaluated = a.evaluatedItems(m)
	}
	for i, x := range v {
		var s any
		switch {
		case i < len(prefix):
			s = prefix[i]
		case hasRest:
			s = rest
		case i >= evaluated:
			s = unevaluated
		}
		if s != nil {
			if err := a.check(s, x, elem(path, strconv.Itoa(i))); err != nil {
				return err
			}
		}
	}
	return a.checkContains(m, v, path)
}

// evaluatedItems is how many items of an array m or a subschema applied
// in place says something of (math.MaxInt: all of them).
func (a *argSchema) evaluatedItems(m map[string]any) int {
	n := 0
	a.inPlace(m, func(s map[string]any) {
		prefix, _ := s["prefixItems"].([]any)
		if tuple, ok := s["items"].([]any); ok {
			prefix = tuple
			if _, ok := s["additionalItems"]; ok {
				n = math.MaxInt
			}
		} else if _, ok := s["items"]; ok {
			n = math.MaxInt
		}
		n = max(n, len(prefix))
	})
	return n
}

func (a *argSchema) checkContains(m map[string]any, v []any, path string) error {
	c, ok := m["contains"]
	if !ok {
		return nil
	}
	n := 0
	for i, x := range v {
		if a.check(c, x, elem(path, strconv.Itoa(i))) == nil {
			n++
		}
	}
	lo, ok := num(m, "minContains")
	if !ok {
		lo = 1
	}
	if float64(n) < lo {
		return fail(path, "want at least %v items matching \"contains\"", lo)
	}
	if hi, ok := num(m, "maxContains"); ok && float64(n) > hi {
		return fail(path, "want at most %v items matching \"contains\"", hi)
	}
	return nil
}
