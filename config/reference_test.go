package config

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// referencePath is the configuration reference: every key the
// configuration accepts has a row there.
const referencePath = "../docs/configuration.md"

// refKey is one key the configuration accepts, as the decoder walks it:
// its path ("llm.providers[].name": [] stands for any element of a list),
// the name of its type in the reference, and its default, rendered as the
// reference writes it ("" when it has none to check: an element of a
// list has no default value).
type refKey struct {
	path, typ, def string
	hasDef         bool
}

var (
	secretType = reflect.TypeFor[Secret]()
)

// referenceKeys walks the configuration types from their defaults (the
// gateway sections from the real gateway table, as the decoder takes
// them) and returns every key a file may set, in the order of the types.
// A struct (a section) is no key of its own: its fields are; a list of
// structs is a key and so is each field of its elements.
func referenceKeys(t *testing.T) []refKey {
	t.Helper()
	var keys []refKey
	c := Default(specs())
	var walk func(v reflect.Value, typ reflect.Type, path string)
	walk = func(v reflect.Value, typ reflect.Type, path string) {
		switch {
		case typ == gatewaysType:
			g := v.Interface().(Gateways)
			for _, name := range g.Names() {
				s := reflect.ValueOf(g.Section(name))
				walk(s.Elem(), s.Elem().Type(), join(path, name))
			}
			return
		case typ.Kind() == reflect.Struct && typ != durationType && typ != sizeType:
			for i := range typ.NumField() {
				f := typ.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
				if !f.IsExported() || name == "" || name == "-" {
					continue
				}
				var fv reflect.Value
				if v.IsValid() {
					fv = v.Field(i)
				}
				walk(fv, f.Type, join(path, name))
			}
			return
		case typ.Kind() == reflect.Pointer && typ.Elem().Kind() == reflect.Struct:
			// An optional section (llm.providers[].price): its fields.
			var ev reflect.Value
			if v.IsValid() && !v.IsNil() {
				ev = v.Elem()
			}
			walk(ev, typ.Elem(), path)
			return
		case typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.Struct:
			keys = append(keys, refKey{path: path, typ: "list", def: renderDefault(v), hasDef: v.IsValid()})
			walk(reflect.Value{}, typ.Elem(), path+"[]")
			return
		}
		name, err := refTypeName(typ)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		keys = append(keys, refKey{path: path, typ: name, def: renderDefault(v), hasDef: v.IsValid()})
	}
	walk(reflect.ValueOf(c).Elem(), reflect.TypeOf(c).Elem(), "")
	return keys
}

// refTypeName is the name of a key's type in the reference.
func refTypeName(typ reflect.Type) (string, error) {
	switch {
	case typ == durationType:
		return "duration", nil
	case typ == sizeType:
		return "size", nil
	case typ == secretType:
		return "secret", nil
	case typ.Kind() == reflect.Pointer:
		return refTypeName(typ.Elem())
	case typ.Kind() == reflect.Slice:
		elem, err := refTypeName(typ.Elem())
		return "list of " + plural(elem), err
	case typ.Kind() == reflect.Map:
		elem, err := refTypeName(typ.Elem())
		return "map of " + plural(elem), err
	}
	switch typ.Kind() {
	case reflect.String:
		return "string", nil
	case reflect.Bool:
		return "bool", nil
	case reflect.Int:
		return "integer", nil
	case reflect.Float64:
		return "number", nil
	}
	return "", fmt.Errorf("type %s has no name in the reference; add one to refTypeName", typ)
}

func plural(name string) string {
	if strings.HasPrefix(name, "list of ") || strings.HasPrefix(name, "map of ") {
		return "lists of " + strings.TrimPrefix(strings.TrimPrefix(name, "list of "), "map of ")
	}
	return name + "s"
}

// renderDefault writes a default value as the reference does: strings as
// they are (`""` when empty), durations and sizes in their units, lists
// in flow style, an unset optional value as "unset".
func renderDefault(v reflect.Value) string {
	if !v.IsValid() {
		return ""
	}
	switch {
	case v.Type() == durationType:
		return Duration(v.Int()).String()
	case v.Type() == sizeType:
		return Size(v.Int()).String()
	case v.Type() == secretType:
		if v.String() == "" {
			return `""`
		}
		return v.String()
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "unset"
		}
		return renderDefault(v.Elem())
	case reflect.String:
		if v.String() == "" {
			return `""`
		}
		return v.String()
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Slice:
		items := make([]string, v.Len())
		for i := range v.Len() {
			items[i] = renderDefault(v.Index(i))
		}
		return "[" + strings.Join(items, ", ") + "]"
	case reflect.Map:
		if v.Len() == 0 {
			return "{}"
		}
		var items []string
		for _, k := range v.MapKeys() {
			items = append(items, k.String()+": "+renderDefault(v.MapIndex(k)))
		}
		slices.Sort(items)
		return "{" + strings.Join(items, ", ") + "}"
	}
	return fmt.Sprint(v.Interface())
}

// refRow is one row of the reference's key table.
type refRow struct {
	line                        int
	key, typ, def, reload, what string
}

var (
	firstCode = regexp.MustCompile("`([^`]*)`")
	rowStart  = regexp.MustCompile("^\\| `[a-z_]")
)

// readReference parses the rows of the reference's key tables: lines
// "| `key` | type | default | reloads | what it does |".
func readReference(t *testing.T) []refRow {
	t.Helper()
	b, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	var rows []refRow
	for i, line := range strings.Split(string(b), "\n") {
		if !rowStart.MatchString(line) {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), " | ")
		if len(cells) != 5 {
			t.Errorf("%s:%d: want 5 cells (key, type, default, reloads, what it does), found %d: %s", referencePath, i+1, len(cells), line)
			continue
		}
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		rows = append(rows, refRow{line: i + 1, key: firstCode.FindStringSubmatch(cells[0])[1],
			typ: cells[1], def: cells[2], reload: cells[3], what: cells[4]})
	}
	return rows
}

// TestConfigurationReferenceHasEveryKey: every key the configuration
// accepts (walked from the configuration types and the gateway table's
// sections, as the strict decoder takes them) has exactly one row in
// docs/configuration.md giving its type, its default, whether a reload
// applies it and what it does; no row names a key the configuration does
// not accept. A key added, renamed or removed without its entry fails
// here.
func TestConfigurationReferenceHasEveryKey(t *testing.T) {
	keys := referenceKeys(t)
	rows := readReference(t)
	byKey := make(map[string]refRow, len(rows))
	for _, r := range rows {
		if prev, dup := byKey[r.key]; dup {
			t.Errorf("%s:%d: %s has a second row (first at line %d)", referencePath, r.line, r.key, prev.line)
		}
		byKey[r.key] = r
	}
	known := make(map[string]bool, len(keys))
	for _, k := range keys {
		known[k.path] = true
		r, ok := byKey[k.path]
		if !ok {
			t.Errorf("%s has no row for %s (%s, default %s): add `| `%s` | %s | … | yes or no | what it does |`", referencePath, k.path, k.typ, k.def, k.path, k.typ)
			continue
		}
		if r.typ != k.typ {
			t.Errorf("%s:%d: %s is a %s, the reference says %q", referencePath, r.line, k.path, k.typ, r.typ)
		}
		if k.hasDef {
			got := ""
			if strings.HasPrefix(r.def, "unset") {
				got = "unset"
			} else if m := firstCode.FindStringSubmatch(r.def); m != nil {
				got = m[1]
			}
			if !sameDefault(k.typ, got, k.def) {
				t.Errorf("%s:%d: %s defaults to %s, the reference says %q", referencePath, r.line, k.path, k.def, r.def)
			}
		}
		if !strings.HasPrefix(r.reload, "yes") && !strings.HasPrefix(r.reload, "no") {
			t.Errorf("%s:%d: %s: whether a reload applies it is %q; want yes or no", referencePath, r.line, k.path, r.reload)
		}
		if r.what == "" {
			t.Errorf("%s:%d: %s says nothing of what it does", referencePath, r.line, k.path)
		}
	}
	for _, r := range rows {
		if !known[r.key] {
			t.Errorf("%s:%d: a row for %s, which the configuration does not accept (renamed or removed?)", referencePath, r.line, r.key)
		}
	}
	if len(keys) < 50 {
		t.Fatalf("walked only %d keys; the walk is broken", len(keys))
	}
}

// sameDefault reports whether the reference's default, as written, is
// want: a duration or a size may be written in another unit (60s for 1m).
func sameDefault(typ, written, want string) bool {
	switch typ {
	case "duration":
		a, errA := ParseDuration(written)
		b, errB := ParseDuration(want)
		return errA == nil && errB == nil && a == b
	case "size":
		a, errA := ParseSize(written)
		b, errB := ParseSize(want)
		return errA == nil && errB == nil && a == b
	}
	return written == want
}
