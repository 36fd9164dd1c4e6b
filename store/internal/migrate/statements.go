package migrate

import (
	"errors"
	"fmt"
	"strings"
)

// Statements splits a migration's "-- +goose Up" section into the
// statements to run, as goose splits it: a statement ends with the line
// whose last word before a "--" comment ends with ';', or is everything
// between "-- +goose StatementBegin" and "-- +goose StatementEnd" (for
// bodies with semicolons of their own); comment lines and blank lines
// before a statement are left out, those inside it kept. The section ends
// at "-- +goose Down". The annotations goose has that gatehouse's
// migrations do not use (NO TRANSACTION, ENVSUB) are refused rather than
// run differently.
func Statements(text string) ([]string, error) {
	var stmts []string
	var buf strings.Builder
	up, block := false, false
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") && strings.Contains(line, "+goose") {
			a := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(trimmed, "--")), "+goose"))
			switch {
			case a == "Up" && !up:
				up = true
				continue
			case a == "Down" && up && !block:
				if rest := strings.TrimSpace(buf.String()); rest != "" {
					return nil, fmt.Errorf("a statement before -- +goose Down has no ';': %q", rest)
				}
				return stmts, nil
			case a == "StatementBegin" && up && !block:
				block = true
				continue
			case a == "StatementEnd" && block:
				block = false
				stmts = append(stmts, strings.TrimSpace(buf.String()))
				buf.Reset()
				continue
			}
			return nil, fmt.Errorf("annotation %q not supported here", trimmed)
		}
		if !up {
			if trimmed != "" && !strings.HasPrefix(trimmed, "--") {
				return nil, errors.New("want -- +goose Up before the first statement")
			}
			continue
		}
		if buf.Len() == 0 && (strings.HasPrefix(trimmed, "--") || line == "") {
			continue
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		if !block && endsWithSemicolon(line) {
			stmts = append(stmts, strings.TrimSpace(buf.String()))
			buf.Reset()
		}
	}
	switch {
	case !up:
		return nil, errors.New("want -- +goose Up")
	case block:
		return nil, errors.New("-- +goose StatementBegin without -- +goose StatementEnd")
	case strings.TrimSpace(buf.String()) != "":
		return nil, fmt.Errorf("the last statement has no ';': %q", strings.TrimSpace(buf.String()))
	}
	return stmts, nil
}

// endsWithSemicolon reports whether the last word of line before a "--"
// comment ends with ';'.
func endsWithSemicolon(line string) bool {
	prev := ""
	for word := range strings.FieldsSeq(line) {
		if strings.HasPrefix(word, "--") {
			break
		}
		prev = word
	}
	return strings.HasSuffix(prev, ";")
}
