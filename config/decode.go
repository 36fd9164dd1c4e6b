package config

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gatehouse-bot/gatehouse/internal/confkit"
)

// decoder copies a YAML tree onto a Config that already holds the defaults,
// strictly: unknown and duplicate keys and wrong types are errors naming the
// key path. It expands ${VAR} in scalar values (never in keys) as it goes
// and records each key path's line for later validation errors.
type decoder struct {
	lookup func(string) (string, bool)
	lines  map[string]int
	// unset maps a key path whose value expanded to "" to the variables
	// (unset or empty, without a default) it referenced.
	unset map[string][]string
	// expanded maps a value that ${VAR} expansion produced to the text
	// as written: an error quotes the written form, never what came from
	// the environment (a secret put in the wrong key).
	expanded map[string]string
}

var (
	durationType = reflect.TypeFor[Duration]()
	sizeType     = reflect.TypeFor[Size]()
	gatewaysType = reflect.TypeFor[Gateways]()
)

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) error {
	return &Error{Key: path, Line: n.Line, Msg: fmt.Sprintf(format, args...)}
}

// decode fills v from n. A null node keeps v (its default).
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	switch {
	case v.Type() == durationType:
		return d.duration(n, v, path)
	case v.Type() == sizeType:
		return d.size(n, v, path)
	case v.Type() == gatewaysType:
		return d.gateways(n, v.Addr().Interface().(*Gateways), path)
	case v.Kind() == reflect.Pointer:
		return d.pointer(n, v, path)
	case v.Kind() == reflect.Struct:
		return d.structure(n, v, path)
	case v.Kind() == reflect.Slice:
		return d.list(n, v, path)
	case v.Kind() == reflect.Map:
		return d.mapping(n, v, path)
	}
	return d.scalar(n, v, path)
}

// pointer decodes into a new value; an empty scalar keeps nil.
func (d *decoder) pointer(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind == yaml.ScalarNode {
		if s, err := d.text(n, path, "a value"); err != nil || s == "" {
			return err
		}
	}
	p := reflect.New(v.Type().Elem())
	if err := d.decode(n, p.Elem(), path); err != nil {
		return err
	}
	v.Set(p)
	return nil
}

// structure decodes a mapping into a struct by the fields' yaml tags.
func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) error {
	return d.pairs(n, path, func(key string, val *yaml.Node, keyPath string) error {
		f, ok := fieldByTag(v, key)
		if !ok {
			return d.unknown(val, keyPath, key, tags(v.Type()))
		}
		return d.decode(val, f, keyPath)
	})
}

// unknown is the error for a key that is not one of known, with the
// nearest known key when one is close (a typo):
//
//	llm.max_step: unknown key; did you mean max_steps?
func (d *decoder) unknown(n *yaml.Node, path, key string, known []string) error {
	if near, ok := confkit.Nearest(key, known); ok {
		return d.fail(n, path, "unknown key; did you mean %s?", near)
	}
	return d.fail(n, path, "unknown key")
}

// gateways decodes each gateways.<name> into the section the gateway
// table gave for that name; a name not in the table is an unknown key.
func (d *decoder) gateways(n *yaml.Node, g *Gateways, path string) error {
	return d.pairs(n, path, func(key string, val *yaml.Node, keyPath string) error {
		s := g.Section(key)
		if s == nil {
			return d.unknown(val, keyPath, key, g.Names())
		}
		v := reflect.ValueOf(s)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			return d.fail(val, keyPath, "section type %T is not a pointer to a struct", s) // a bug in the gateway's package
		}
		return d.decode(val, v.Elem(), keyPath)
	})
}

// mapping decodes a mapping into a map[string]T, replacing the default.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) error {
	m := reflect.MakeMap(v.Type())
	err := d.pairs(n, path, func(key string, val *yaml.Node, keyPath string) error {
		e := reflect.New(v.Type().Elem()).Elem()
		if err := d.decode(val, e, keyPath); err != nil {
			return err
		}
		m.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), e)
		return nil
	})
	if err == nil {
		v.Set(m)
	}
	return err
}

// pairs walks a mapping's keys in order, rejecting duplicates.
func (d *decoder) pairs(n *yaml.Node, path string, each func(key string, val *yaml.Node, keyPath string) error) error {
	if n.Kind != yaml.MappingNode {
		return d.fail(n, path, "want a mapping, got %s", kindName(n))
	}
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return d.fail(k, path, "want a plain key, got %s", kindName(k))
		}
		keyPath := join(path, k.Value)
		if line, dup := seen[k.Value]; dup {
			return d.fail(k, keyPath, "duplicate key (first at line %d)", line)
		}
		seen[k.Value] = k.Line
		d.lines[keyPath] = k.Line
		if err := each(k.Value, val, keyPath); err != nil {
			return err
		}
	}
	return nil
}

// list decodes a sequence into a fresh slice, replacing the default.
func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.SequenceNode {
		return d.fail(n, path, "want a list, got %s", kindName(n))
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		itemPath := fmt.Sprintf("%s[%d]", path, i)
		d.lines[itemPath] = item.Line
		if err := d.decode(item, s.Index(i), itemPath); err != nil {
			return err
		}
	}
	v.Set(s)
	return nil
}

// text returns a scalar's value with ${VAR} expanded.
func (d *decoder) text(n *yaml.Node, path, want string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", d.fail(n, path, "want %s, got %s", want, kindName(n))
	}
	s, empty, err := expandVars(n.Value, d.lookup)
	if err != nil {
		return "", d.fail(n, path, "%v", err)
	}
	if s != n.Value && len(s) >= minHidden {
		if d.expanded == nil {
			d.expanded = map[string]string{}
		}
		d.expanded[s] = n.Value
	}
	if s == "" && len(empty) > 0 {
		if d.unset == nil {
			d.unset = map[string][]string{}
		}
		d.unset[path] = empty
	}
	return s, nil
}

// scalar decodes strings, bools, ints and float64s. An empty value (an unset ${VAR})
// keeps a bool's or int's default.
func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.String:
		s, err := d.text(n, path, "a string")
		if err == nil {
			v.SetString(s)
		}
		return err
	case reflect.Bool:
		s, err := d.text(n, path, "true or false")
		if err != nil || s == "" {
			return err
		}
		b, ok := parseBool(s)
		if !ok {
			return d.fail(n, path, "want true or false, got %s", quote(s))
		}
		v.SetBool(b)
		return nil
	case reflect.Int:
		s, err := d.text(n, path, "an integer")
		if err != nil || s == "" {
			return err
		}
		i, perr := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if perr != nil || v.OverflowInt(i) {
			return d.fail(n, path, "want an integer, got %s", quote(s))
		}
		v.SetInt(i)
		return nil
	case reflect.Float64:
		s, err := d.text(n, path, "a number")
		if err != nil || s == "" {
			return err
		}
		f, perr := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if perr != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return d.fail(n, path, "want a number, got %s", quote(s))
		}
		v.SetFloat(f)
		return nil
	}
	return d.fail(n, path, "unsupported type %s", v.Type()) // a bug in this package's types
}

func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) error {
	s, err := d.text(n, path, "a duration")
	if err != nil || s == "" {
		return err
	}
	dur, perr := ParseDuration(s)
	if perr != nil {
		return d.fail(n, path, "%v", perr)
	}
	v.SetInt(int64(dur))
	return nil
}

func (d *decoder) size(n *yaml.Node, v reflect.Value, path string) error {
	s, err := d.text(n, path, "a size")
	if err != nil || s == "" {
		return err
	}
	sz, perr := ParseSize(s)
	if perr != nil {
		return d.fail(n, path, "%v", perr)
	}
	v.SetInt(int64(sz))
	return nil
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// fieldByTag finds the struct field whose yaml tag is key.
func fieldByTag(v reflect.Value, key string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == key && t.Field(i).IsExported() {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// tags returns the yaml keys of struct type t's exported fields.
func tags(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" && t.Field(i).IsExported() {
			keys = append(keys, name)
		}
	}
	return keys
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
