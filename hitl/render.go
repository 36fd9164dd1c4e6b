package hitl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// Rendering limits, in runes.
const (
	maxCommandRunes = 600  // the command of a shell-like call in a request
	maxFieldRunes   = 200  // any other argument value in a request
	maxSummaryRunes = 100  // ApprovalPrompt.Summary and /pending lines
	maxArgsForLLM   = 2000 // arguments quoted back to the LLM in an outcome
	maxOutputRunes  = 1500 // tool output quoted in a notice to people
	maxMCPArgsRunes = 1500 // an MCP call's whole arguments in a request
)

// commandKeys are the argument names whose string value is a command line,
// shown as code rather than as a key/value pair.
var commandKeys = []string{"command", "cmd", "script"}

// argField is one top-level argument, its value as text.
type argField struct {
	key, val string
}

// argFields parses an arguments JSON object into its fields, sorted by key;
// string values are unquoted, others compacted. ok is false when args is
// not a JSON object.
func argFields(args string) (fields []argField, ok bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &m); err != nil || m == nil {
		return nil, false
	}
	for k, raw := range m {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			var buf bytes.Buffer
			if json.Compact(&buf, raw) == nil {
				raw = buf.Bytes()
			}
			s = string(raw)
		}
		fields = append(fields, argField{k, s})
	}
	// sort.Slice: see TestReleaseSortsShareOneShape (internal/archtest).
	sort.Slice(fields, func(i, j int) bool { return fields[i].key < fields[j].key })
	return fields, true
}

// splitCommand takes the command-line field out of fields, if there is one.
func splitCommand(fields []argField) (command string, rest []argField, ok bool) {
	for _, key := range commandKeys {
		i := slices.IndexFunc(fields, func(f argField) bool { return f.key == key })
		if i >= 0 {
			return fields[i].val, slices.Delete(slices.Clone(fields), i, i+1), true
		}
	}
	return "", fields, false
}

// renderCaps are the rendering limits of a request, in runes.
type renderCaps struct {
	command, field, mcp int
}

// Today's limits for a chat message, and none for a gateway that shows a
// request of any length whole (a terminal).
var (
	chatCaps  = renderCaps{command: maxCommandRunes, field: maxFieldRunes, mcp: maxMCPArgsRunes}
	wholeCaps = renderCaps{command: math.MaxInt, field: math.MaxInt, mcp: math.MaxInt}
)

// renderCall renders a call's arguments for people: the command of a
// shell-like call as code, other arguments as "key: `value`" lines, with
// invisible and bidi characters escaped. shortened reports that something
// was cut (the request then points to /show); hidden, that something was
// escaped.
func renderCall(call llm.ToolCall) (text string, shortened, hidden bool) {
	return renderCallCaps(call, chatCaps)
}

// renderCallCaps is renderCall within caps.
func renderCallCaps(call llm.ToolCall, caps renderCaps) (text string, shortened, hidden bool) {
	if server, tool, ok := mcpCall(call.Name); ok {
		// An MCP tool's arguments mean what its server makes of them:
		// shown whole, as JSON, like a shell command.
		args, cut := clipped(prettyArgs(call.Args), caps.mcp)
		return fmt.Sprintf("MCP server %s, tool %s, arguments:\n%s", codeSpan(textutil.Graphic(server)), codeSpan(textutil.Graphic(tool)), codeBlock(args)),
			cut, textutil.HasHidden(call.Args) || jsonHidden(call.Args)
	}
	fields, ok := argFields(call.Args)
	if !ok {
		s, cut := clipped(call.Args, caps.command)
		s, hidden = escapeHidden(s)
		return codeBlock(s), cut, hidden
	}
	var b strings.Builder
	// show clips and escapes one value, keeping count of both.
	show := func(s string, n int) string {
		s, cut := clipped(s, n)
		s, esc := escapeHidden(s)
		shortened, hidden = shortened || cut, hidden || esc
		return s
	}
	command, rest, ok := splitCommand(fields)
	if ok {
		b.WriteString(codeBlock(show(command, caps.command)))
	}
	for _, f := range rest {
		k, v := show(f.key, caps.field), show(f.val, caps.field)
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		// Every value as code: gateways render the request's Markdown,
		// and "__x__" or "[a](b)" outside code would not read as it runs.
		if strings.Contains(v, "\n") {
			fmt.Fprintf(&b, "%s:\n%s", k, codeBlock(v))
		} else {
			fmt.Fprintf(&b, "%s: %s", k, codeSpan(v))
		}
	}
	return b.String(), shortened, hidden
}

// jsonHidden reports whether a string anywhere in a JSON document (a key
// or a value, at any depth) holds a character a chat app would not show.
func jsonHidden(doc string) bool {
	var v any
	if json.Unmarshal([]byte(doc), &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			return textutil.HasHidden(v)
		case []any:
			return slices.ContainsFunc(v, walk)
		case map[string]any:
			for k, x := range v {
				if textutil.HasHidden(k) || walk(x) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// mcpCall splits an MCP tool's name "mcp__<server>__<tool>" (a shortened
// tool part keeps its hash suffix).
func mcpCall(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, core.MCPPrefix)
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, "__")
}

// escapeHidden shows every rune a chat app would not show as itself
// escaped (textutil.Graphic: controls but the newline, format characters
// such as bidi overrides and zero-width ones, invalid bytes), so a command
// cannot read differently from what runs. found reports whether there was
// such a rune (a backslash doubled to keep the escapes unambiguous does
// not count).
func escapeHidden(s string) (out string, found bool) {
	return textutil.Graphic(s), textutil.HasHidden(s)
}

// summarize renders a call's arguments on one short line (for buttons,
// /pending and notices), invisible and bidi characters escaped.
func summarize(call llm.ToolCall) string {
	fields, ok := argFields(call.Args)
	var s string
	switch command, rest, isCmd := splitCommand(fields); {
	case !ok:
		s = call.Args
	case isCmd:
		s = command
		for _, f := range rest {
			s += fmt.Sprintf(" [%s=%s]", f.key, f.val)
		}
	default:
		parts := make([]string, len(fields))
		for i, f := range fields {
			parts[i] = f.key + "=" + f.val
		}
		s = strings.Join(parts, ", ")
	}
	s, _ = escapeHidden(s) // before Fields, which would hide a CR as a space
	return clip(strings.Join(strings.Fields(s), " "), maxSummaryRunes)
}

// clipped is clip that also reports whether it cut.
func clipped(s string, n int) (string, bool) {
	c := clip(s, n)
	return c, c != s
}

// codeSpan renders s as inline code, choosing a fence longer than any run of
// backticks inside it.
func codeSpan(s string) string {
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// codeBlock renders s as inline code when it is one line, as a fenced block
// otherwise.
func codeBlock(s string) string {
	if !strings.Contains(s, "\n") {
		return codeSpan(s)
	}
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return fence + "\n" + strings.TrimRight(s, "\n") + "\n" + fence
}

// longestRun returns the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// prettyArgs indents an arguments JSON object for /show (invalid JSON is
// kept as it is), invisible and bidi characters escaped.
func prettyArgs(args string) string {
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(args), "", "  ") == nil {
		args = buf.String()
	}
	if json.Valid([]byte(args)) {
		return textutil.GraphicJSON(args) // JSON's own escapes stay readable as JSON
	}
	return textutil.Graphic(args)
}

// humanDuration renders d rounded for people: "15m", "1h30m", "45s".
func humanDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Minute:
		return d.Round(time.Second).String()
	}
	s := d.Round(time.Minute).String()
	s = strings.TrimSuffix(s, "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// clockTime renders t as "15:04 UTC".
func clockTime(t time.Time) string { return t.UTC().Format("15:04 UTC") }
