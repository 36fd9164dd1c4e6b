package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// expand replaces ${VAR} and ${VAR:-default} in s with values from lookup;
// the default applies when VAR is unset or empty and is taken literally. $$
// is a literal $, and a $ not followed by { or $ stays as it is. An unset
// VAR without default expands to "".
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	v, _, err := expandVars(s, lookup)
	return v, err
}

// expandVars is expand that also returns the variables, referenced without
// a default, that were unset or empty: when the value ends up empty, they
// are why, and a "required" error names them.
func expandVars(s string, lookup func(string) (string, bool)) (string, []string, error) {
	if !strings.Contains(s, "$") {
		return s, nil, nil
	}
	var empty []string
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case s[i] != '$':
			b.WriteByte(s[i])
			i++
		case strings.HasPrefix(s[i:], "$$"):
			b.WriteByte('$')
			i += 2
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return "", nil, errors.New("unterminated ${ (write $$ for a literal $)")
			}
			ref := s[i+2 : i+end]
			v, err := lookupRef(ref, lookup)
			if err != nil {
				return "", nil, err
			}
			if v == "" && !strings.Contains(ref, ":-") {
				empty = append(empty, ref)
			}
			b.WriteString(v)
			i += end + 1
		default:
			b.WriteByte('$')
			i++
		}
	}
	return b.String(), empty, nil
}

// lookupRef resolves the inside of one ${…}.
func lookupRef(ref string, lookup func(string) (string, bool)) (string, error) {
	name, def, hasDef := strings.Cut(ref, ":-")
	if !validVarName(name) {
		return "", fmt.Errorf("bad variable reference ${%s} (want ${NAME} or ${NAME:-default})", shorten(name))
	}
	v, ok := lookup(name)
	if hasDef && (!ok || v == "") {
		return def, nil
	}
	return v, nil
}

func validVarName(name string) bool {
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return false
	}
	for _, c := range name {
		if c != '_' && !(c >= 'A' && c <= 'Z') && !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func shorten(s string) string {
	if len(s) > maxQuoted {
		return s[:maxQuoted] + "…"
	}
	return s
}

// protectRefs replaces each one-line ${…} in the raw file with a plain
// placeholder word before YAML parsing, so that references work unquoted in
// flow collections ({token: ${TOKEN}}), where YAML forbids '{' and '}' in a
// plain scalar. restoreRefs puts them back into the parsed tree.
func protectRefs(data []byte) (string, *strings.Replacer) {
	text := string(data)
	if !strings.Contains(text, "${") {
		return text, nil
	}
	prefix := "__gatehouse_ref"
	for strings.Contains(text, prefix) {
		prefix += "_"
	}
	var b strings.Builder
	var pairs []string
	for i := 0; i < len(text); {
		if strings.HasPrefix(text[i:], "$$") {
			b.WriteString("$$")
			i += 2
			continue
		}
		end := refEnd(text[i:])
		if end < 0 {
			b.WriteByte(text[i])
			i++
			continue
		}
		ph := prefix + strconv.Itoa(len(pairs)/2) + "_"
		pairs = append(pairs, ph, text[i:i+end])
		b.WriteString(ph)
		i += end
	}
	return b.String(), strings.NewReplacer(pairs...)
}

// refEnd returns the length of the ${…} reference s starts with, or -1.
func refEnd(s string) int {
	if !strings.HasPrefix(s, "${") {
		return -1
	}
	end := strings.IndexAny(s, "}\n")
	if end < 0 || s[end] != '}' {
		return -1
	}
	return end + 1
}

// restoreRefs undoes protectRefs in every scalar, keys included, without
// following aliases (their targets are visited where they are defined).
func restoreRefs(n *yaml.Node, r *strings.Replacer) {
	if r == nil || n == nil {
		return
	}
	if n.Kind == yaml.ScalarNode {
		n.Value = r.Replace(n.Value)
	}
	for _, c := range n.Content {
		restoreRefs(c, r)
	}
}
