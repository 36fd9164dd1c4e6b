package skills

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// FrontMatter is SKILL.md's front matter as written, before Validate.
type FrontMatter struct {
	Fields
	// Has records which fields were present.
	Has map[string]bool
	// Problems are the fields of the wrong shape (a list where a string
	// is due) and, as warnings, the fields the specification does not
	// define.
	Problems []Problem
}

// errNoFrontMatter and errUnclosed: SKILL.md does not begin with a front
// matter block between two "---" lines.
var (
	errNoFrontMatter = errors.New(`must begin with "---", a YAML front matter block`)
	errUnclosed      = errors.New(`front matter not closed by a "---" line`)
)

// Parse splits SKILL.md into its front matter, decoded, and the Markdown
// body after it. An error says why the file has no usable front matter
// (none, not closed, not YAML, not a mapping); a field of the wrong shape
// is a Problem in the FrontMatter, not an error.
func Parse(data []byte) (FrontMatter, string, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	first, rest, ok := cutLine(data)
	if !ok || !isFence(first) {
		return FrontMatter{}, "", errNoFrontMatter
	}
	start := len(data) - len(rest)
	for {
		at := len(data) - len(rest)
		line, after, more := cutLine(rest)
		if isFence(line) {
			return decode(data[start:at], string(after))
		}
		if !more {
			return FrontMatter{}, "", errUnclosed
		}
		rest = after
	}
}

// cutLine returns data's first line without its line break, what follows
// it, and whether a line break ended it.
func cutLine(data []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return data, nil, false
	}
	return bytes.TrimSuffix(data[:i], []byte("\r")), data[i+1:], true
}

func isFence(line []byte) bool { return string(bytes.TrimRight(line, " \t")) == "---" }

// decode reads the front matter's YAML into a FrontMatter.
func decode(text []byte, body string) (FrontMatter, string, error) {
	fm := FrontMatter{Has: map[string]bool{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return fm, "", fmt.Errorf("front matter is not YAML: %s", firstLine(err.Error()))
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return fm, "", errors.New("front matter is not a YAML mapping of fields")
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		if fm.Has[k] {
			fm.Problems = append(fm.Problems, Problem{Field: fieldName(k), Rule: "given twice"})
			continue
		}
		fm.Has[k] = true
		fm.field(k, v)
	}
	return fm, body, nil
}

// field sets the field k from v.
func (fm *FrontMatter) field(k string, v *yaml.Node) {
	str := func(dst *string) {
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			fm.Problems = append(fm.Problems, Problem{Field: k, Rule: "must be a string"})
			return
		}
		*dst = v.Value
	}
	switch k {
	case "name":
		str(&fm.Name)
	case "description":
		str(&fm.Description)
	case "license":
		str(&fm.License)
	case "compatibility":
		str(&fm.Compatibility)
	case "allowed-tools":
		str(&fm.AllowedTools)
	case "metadata":
		fm.metadata(v)
	default:
		fm.Problems = append(fm.Problems, Problem{Field: fieldName(k), Warning: true,
			Rule: "not a field of the specification (ignored)"})
	}
}

// metadata reads the metadata mapping, string to string.
func (fm *FrontMatter) metadata(v *yaml.Node) {
	if v.Kind != yaml.MappingNode {
		fm.Problems = append(fm.Problems, Problem{Field: "metadata", Rule: "must be a mapping of strings to strings"})
		return
	}
	fm.Metadata = make(map[string]string, len(v.Content)/2)
	for i := 0; i+1 < len(v.Content); i += 2 {
		key, val := v.Content[i], v.Content[i+1]
		if key.Kind != yaml.ScalarNode || val.Kind != yaml.ScalarNode || val.Tag == "!!null" {
			fm.Problems = append(fm.Problems, Problem{Field: "metadata", Rule: "must be a mapping of strings to strings"})
			return
		}
		fm.Metadata[key.Value] = val.Value
	}
}

// Validate checks fm against the specification for a skill in the
// folder named folder: each rule broken is a Problem naming its field.
// The warnings of fm (unknown fields) are returned too.
func Validate(fm FrontMatter, folder string) []Problem {
	probs := append([]Problem(nil), fm.Problems...)
	bad := func(field, rule string, args ...any) {
		probs = append(probs, Problem{Field: field, Rule: fmt.Sprintf(rule, args...)})
	}
	switch {
	case !fm.Has["name"]:
		bad("name", "required")
	default:
		if rule := nameRule(fm.Name); rule != "" {
			bad("name", "%s", rule)
		} else if fm.Name != folder {
			bad("name", "must equal the folder's name %q", textShown(folder, MaxName+8))
		}
	}
	switch n := utf8.RuneCountInString(fm.Description); {
	case !fm.Has["description"]:
		bad("description", "required")
	case strings.TrimSpace(fm.Description) == "":
		bad("description", "must not be empty")
	case n > MaxDescription:
		bad("description", "%d characters, over the %d allowed", n, MaxDescription)
	}
	if fm.Has["compatibility"] {
		switch n := utf8.RuneCountInString(fm.Compatibility); {
		case strings.TrimSpace(fm.Compatibility) == "":
			bad("compatibility", "must not be empty when given")
		case n > MaxCompatibility:
			bad("compatibility", "%d characters, over the %d allowed", n, MaxCompatibility)
		}
	}
	for i := range probs {
		probs[i].Skill = folder
	}
	return probs
}

// nameRule returns the rule name breaks, or "" when it is a valid skill
// name: 1 to 64 lowercase letters, digits and hyphens, no hyphen first,
// last or doubled.
func nameRule(name string) string {
	switch n := utf8.RuneCountInString(name); {
	case n == 0:
		return "must not be empty"
	case n > MaxName:
		return fmt.Sprintf("%d characters, over the %d allowed", n, MaxName)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return "only lowercase letters, digits and hyphens"
		}
	}
	switch {
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-"):
		return "must not begin or end with a hyphen"
	case strings.Contains(name, "--"):
		return "must not hold two hyphens in a row"
	}
	return ""
}

// fieldName is a front matter key as a Problem names it: shown safely,
// quoted when empty.
func fieldName(k string) string {
	if strings.TrimSpace(k) == "" {
		return strconv.Quote(k)
	}
	return textShown(k, 64)
}

// ValidName reports whether name is a valid skill name.
func ValidName(name string) bool { return nameRule(name) == "" }

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return textShown(line, 200)
}
