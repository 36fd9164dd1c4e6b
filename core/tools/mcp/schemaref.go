package mcp

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// maxInPlace bounds how many schemas validating one value may evaluate
// before it goes down into the value's parts: far more than any real
// tool's schema, far fewer than a chain of $defs each naming the next
// twice (2^n).
const maxInPlace = 1000

// inPlaceKeys are the keywords whose schemas apply to the value itself,
// not to its parts: following them never makes the value smaller.
var inPlaceKeys = []string{"not", "if", "then", "else"}

// inPlaceLists are the keywords holding such schemas in an array, and
// inPlaceMaps those holding them in an object.
var (
	inPlaceLists = []string{"allOf", "anyOf", "oneOf"}
	inPlaceMaps  = []string{"dependentSchemas", "dependencies"}
)

// errRefUnsupported refuses a reference this check cannot follow as the
// validator would.
var errRefUnsupported = errors.New(`only "#" and "#/…" references within a schema without a nested $id are supported`)

// checkInPlace refuses a schema (decoded JSON) whose validation of one
// value could meet the same schema again without going down into the
// value ($ref "#", $defs naming each other, an allOf back to the top),
// which overflows the validator's stack, a fatal error; or would evaluate
// more than maxInPlace schemas. Every object in the document is counted
// as a schema: a false loop refuses a tool, it never lets one through.
func checkInPlace(root any) error {
	c := &inPlace{root: root, count: map[string]int{}}
	if err := c.scan(root, "", true); err != nil {
		return err
	}
	if c.hasRef && c.nestedID {
		return errRefUnsupported
	}
	return c.visitAll(root, "")
}

type inPlace struct {
	root             any
	count            map[string]int // pointer → schemas evaluated there; -1 while counting
	hasRef, nestedID bool
}

// scan notes the references and nested $ids of the document.
func (c *inPlace) scan(v any, path string, top bool) error {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["$id"].(string); ok && !top {
			c.nestedID = true
		}
		for _, k := range []string{"$dynamicRef", "$recursiveRef"} {
			if _, ok := v[k].(string); ok {
				return fmt.Errorf("%s at %q: %w", k, "#"+path, errRefUnsupported)
			}
		}
		if _, ok := v["$ref"].(string); ok {
			c.hasRef = true
		}
		for k, x := range v {
			if err := c.scan(x, path+"/"+escapeToken(k), false); err != nil {
				return err
			}
		}
	case []any:
		for i, x := range v {
			if err := c.scan(x, path+"/"+strconv.Itoa(i), false); err != nil {
				return err
			}
		}
	}
	return nil
}

// visitAll counts every object of the document.
func (c *inPlace) visitAll(v any, path string) error {
	switch v := v.(type) {
	case map[string]any:
		if _, err := c.visit(v, path); err != nil {
			return err
		}
		for k, x := range v {
			if err := c.visitAll(x, path+"/"+escapeToken(k)); err != nil {
				return err
			}
		}
	case []any:
		for i, x := range v {
			if err := c.visitAll(x, path+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// visit returns how many schemas validating one value against the schema
// at path evaluates, itself included.
func (c *inPlace) visit(node any, path string) (int, error) {
	if n, ok := c.count[path]; ok {
		if n < 0 {
			return 0, fmt.Errorf("validating a value against %q meets it again: a reference loop", "#"+path)
		}
		return n, nil
	}
	m, ok := node.(map[string]any)
	if !ok {
		return 1, nil // true, false
	}
	c.count[path] = -1
	n := 1
	add := func(child any, childPath string) error {
		k, err := c.visit(child, childPath)
		if n += k; err == nil && n > maxInPlace {
			err = fmt.Errorf("validating a value against %q evaluates more than %d schemas", "#"+path, maxInPlace)
		}
		return err
	}
	if ref, ok := m["$ref"].(string); ok {
		target, targetPath, err := c.deref(ref)
		if err != nil {
			return 0, err
		}
		if err := add(target, targetPath); err != nil {
			return 0, err
		}
	}
	for _, k := range inPlaceKeys {
		if x, ok := m[k]; ok {
			if err := add(x, path+"/"+escapeToken(k)); err != nil {
				return 0, err
			}
		}
	}
	for _, k := range inPlaceLists {
		list, _ := m[k].([]any)
		for i, x := range list {
			if err := add(x, path+"/"+escapeToken(k)+"/"+strconv.Itoa(i)); err != nil {
				return 0, err
			}
		}
	}
	for _, k := range inPlaceMaps {
		obj, _ := m[k].(map[string]any)
		for name, x := range obj {
			if err := add(x, path+"/"+escapeToken(k)+"/"+escapeToken(name)); err != nil {
				return 0, err
			}
		}
	}
	c.count[path] = n
	return n, nil
}

// deref finds the target of a "#" or "#/…" reference and its canonical
// pointer.
func (c *inPlace) deref(ref string) (any, string, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok || (frag != "" && !strings.HasPrefix(frag, "/")) {
		return nil, "", fmt.Errorf("$ref %q: %w", ref, errRefUnsupported)
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, "", fmt.Errorf("$ref %q: %w", ref, err)
	}
	v, path := c.root, ""
	if frag == "" {
		return v, path, nil
	}
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			v, ok = x[tok]
			path += "/" + escapeToken(tok)
		case []any:
			i, err := strconv.Atoi(tok)
			ok = err == nil && i >= 0 && i < len(x)
			if ok {
				v, path = x[i], path+"/"+strconv.Itoa(i)
			}
		default:
			ok = false
		}
		if !ok {
			return nil, "", fmt.Errorf("$ref %q: no such schema", ref)
		}
	}
	return v, path, nil
}

// escapeToken escapes a JSON Pointer token.
func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
