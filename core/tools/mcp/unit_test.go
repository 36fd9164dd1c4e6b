package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func TestCleanNameIsPerCharacter(t *testing.T) {
	// cleanName replaced a regexp; names offered before must stay the same.
	invalid := regexp.MustCompile(`[^A-Za-z0-9_-]`)
	for _, s := range []string{"", "plain_name-1", "dotted.name/with spaces", "ünïcødé", "emoji😀tool", "bad\xffbyte", "tab\tnew\nline"} {
		if got, want := cleanName(s), invalid.ReplaceAllString(s, "_"); got != want {
			t.Errorf("cleanName(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestToolName(t *testing.T) {
	if got := ToolName("gh", "create_issue"); got != "mcp__gh__create_issue" {
		t.Errorf("plain name = %q", got)
	}
	long := strings.Repeat("very_long_tool_name_", 5)
	for _, tool := range []string{long, "dotted.name/with spaces"} {
		a, b := ToolName("gh", tool), ToolName("gh", tool)
		if a != b || len(a) > 64 || !regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`).MatchString(a) || !strings.HasPrefix(a, "mcp__gh__") {
			t.Errorf("ToolName(%q) = %q, %q: want one valid name of at most 64 with the prefix", tool, a, b)
		}
		if s, ok := ServerOf(a); !ok || s != "gh" {
			t.Errorf("ServerOf(%q) = %q, %v", a, s, ok)
		}
	}
	if ToolName("gh", long) == ToolName("gh", long+"x") {
		t.Error("two tools cut to the same prefix share a name")
	}
}

func TestConvertSchema(t *testing.T) {
	offered, resolved, err := convertSchema(map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type":    "object",
		"properties": map[string]any{
			"n": map[string]any{"type": "integer", "minimum": 1},
		},
		"required": []any{"n", "ghost"},
		"anyOf":    []any{map[string]any{"required": []any{"n"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := string(offered)
	if strings.Contains(s, "$schema") || strings.Contains(s, "anyOf") || strings.Contains(s, "ghost") || !strings.Contains(s, `"required":["n"]`) {
		t.Errorf("offered = %s", s)
	}
	if err := resolved.Validate(map[string]any{"n": 0.0}); err == nil {
		t.Error("minimum not validated")
	}
	if _, _, err := convertSchema(map[string]any{"type": "array"}); err == nil {
		t.Error("an array schema accepted")
	}
	if offered, _, err := convertSchema(nil); err != nil || string(offered) != `{"properties":{},"type":"object"}` {
		t.Errorf("no schema = %s, %v", offered, err)
	}
	huge := map[string]any{"type": "object", "properties": map[string]any{
		"x": map[string]any{"type": "string", "description": strings.Repeat("d", maxSchema)}}}
	if _, _, err := convertSchema(huge); err == nil || !strings.Contains(err.Error(), "32 KiB") {
		t.Errorf("a schema over %d bytes: %v; want it refused", maxSchema, err)
	}
}

func TestRenderResult(t *testing.T) {
	size := int64(2048)
	blob := base64.StdEncoding.EncodeToString(make([]byte, 7))
	got := renderResult(&callToolResult{
		Content: []content{
			{Type: "text", Text: "hello"},
			{Type: "image", MIMEType: "image/png", Data: base64.StdEncoding.EncodeToString(make([]byte, 10))},
			{Type: "resource_link", URI: "file:///a.pdf", MIMEType: "application/pdf", Size: &size},
			{Type: "resource", Resource: &resourceContents{URI: "file:///b.bin", Blob: &blob}},
		},
		StructuredContent: json.RawMessage(`{"ok":true}`),
	})
	for _, want := range []string{"hello", "[image image/png, 10 bytes]", "[resource link file:///a.pdf (application/pdf, 2048 bytes)]",
		"[resource file:///b.bin (unknown type, 7 bytes)]", `structured content: {"ok":true}`} {
		if !strings.Contains(got, want) {
			t.Errorf("result lacks %q:\n%s", want, got)
		}
	}
	if got := renderResult(&callToolResult{Content: []content{{Type: "text", Text: `{"ok": true}`}}, StructuredContent: json.RawMessage(`{"ok": true}`)}); got != `{"ok": true}` {
		t.Errorf("structured content said twice: %q", got)
	}
}

// TestConvertSchemaRefusesEndlessValidation: a server's schema whose
// validation of one value meets itself again ($ref "#", a loop of $defs,
// an allOf back to the top) overflowed the stack of jsonschema's Validate
// on the first call, a fatal error no recover catches: the whole bot died.
// A chain of $defs each naming the next twice made one call evaluate 2^40
// schemas. Both are refused at conversion, the tool left out; a schema
// that recurses only into the value's parts still converts and validates.
func TestConvertSchemaRefusesEndlessValidation(t *testing.T) {
	bomb := map[string]any{}
	for i := range 40 {
		next := map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i+1)}
		bomb[fmt.Sprintf("d%d", i)] = map[string]any{"allOf": []any{next, next}}
	}
	bomb["d40"] = map[string]any{"type": "string"}
	for name, schema := range map[string]string{
		"ref to the root":       `{"$ref":"#"}`,
		"allOf to the root":     `{"type":"object","allOf":[{"$ref":"#"}]}`,
		"property to itself":    `{"type":"object","properties":{"a":{"$ref":"#/properties/a"}}}`,
		"two $defs":             `{"type":"object","$defs":{"x":{"$ref":"#/$defs/y"},"y":{"anyOf":[{"$ref":"#/$defs/x"}]}},"properties":{"a":{"$ref":"#/$defs/x"}}}`,
		"escaped pointer":       `{"type":"object","$defs":{"a/b":{"not":{"$ref":"#/$defs/a~1b"}}},"properties":{"a":{"$ref":"#/$defs/a~1b"}}}`,
		"percent-encoded":       `{"type":"object","$defs":{"a b":{"if":{"$ref":"#/$defs/a%20b"}}},"properties":{"a":{"$ref":"#/$defs/a%20b"}}}`,
		"dependentSchemas loop": `{"type":"object","dependentSchemas":{"a":{"$ref":"#"}}}`,
	} {
		var input any
		if err := json.Unmarshal([]byte(schema), &input); err != nil {
			t.Fatal(err)
		}
		if _, _, err := convertSchema(input); err == nil {
			t.Errorf("%s: %s accepted", name, schema)
		}
	}
	if _, _, err := convertSchema(map[string]any{"type": "object", "$defs": bomb,
		"properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/d0"}}}); err == nil {
		t.Error("a schema evaluated 2^40 times per value accepted")
	}
	var tree any
	if err := json.Unmarshal([]byte(`{"type":"object","$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"allOf":[{"$ref":"#/$defs/named"}]},"named":{"required":["name"]}},"properties":{"root":{"$ref":"#/$defs/node"}}}`), &tree); err != nil {
		t.Fatal(err)
	}
	_, resolved, err := convertSchema(tree)
	if err != nil {
		t.Fatalf("a tree schema refused: %v", err)
	}
	if err := resolved.Validate(map[string]any{"root": map[string]any{"name": "a", "kids": []any{map[string]any{"name": "b"}}}}); err != nil {
		t.Errorf("a tree refused: %v", err)
	}
	if err := resolved.Validate(map[string]any{"root": map[string]any{"name": "a", "kids": []any{map[string]any{}}}}); err == nil {
		t.Error("a nameless node accepted")
	}
}

// TestStderrIsRedactedBeforeItIsCut: a child's stderr line was cut to
// maxLine before the logger's scrubber saw it, so the head of a secret
// the cut fell inside reached the log, and the last line without its
// newline went into a start error (and /status) unredacted. Lines are
// redacted whole, then cut.
func TestStderrIsRedactedBeforeItIsCut(t *testing.T) {
	const secret = "tok-secret-1234567890abcdef"
	for name, writes := range map[string][]string{
		"cut at maxLine": {strings.Repeat("x", maxLine-42) + secret + " and more words after it\n"},
		"split write":    {strings.Repeat("x", maxLine-10) + secret[:13], secret[13:] + " and more\n"},
		"long line":      {strings.Repeat("x", 4*maxLine-10) + secret[:13], secret[13:] + " and more\n"},
		"no newline yet": {strings.Repeat("x", maxLine-30) + secret},
	} {
		var logs testutil.SyncBuffer
		w := &tailWriter{log: zerolog.New(&logs).Level(zerolog.DebugLevel), secrets: secrets.New(secret)}
		for _, s := range writes {
			if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
				t.Fatalf("%s: Write = %d, %v", name, n, err)
			}
		}
		for _, part := range []string{secret[:8], secret[len(secret)-8:]} {
			if strings.Contains(logs.String(), part) || strings.Contains(w.last(), part) {
				t.Errorf("%s: %q left in the log %q or the last line %q", name, part, logs.String(), w.last())
			}
		}
		if !strings.HasPrefix(w.last(), "xxxx") {
			t.Errorf("%s: last line %q", name, w.last())
		}
	}
}

// TestTaskOnlyToolIsNotOffered: a tool whose execution.taskSupport is
// "required" (server-everything's simulate-research-query) was offered,
// and every call the model made was refused by the server ("requires task
// augmentation"): this client calls no tool as a task. It is left out;
// "optional" and "forbidden" tools are called plainly and stay.
func TestTaskOnlyToolIsNotOffered(t *testing.T) {
	srv := newServer(ServerConfig{Name: "s", Command: "x"}, nil, zerolog.Nop())
	for support, offered := range map[string]bool{"": true, "forbidden": true, "optional": true, "required": false} {
		var rt remoteTool
		page := fmt.Sprintf(`{"name":"t","inputSchema":{"type":"object"},"execution":{"taskSupport":%q}}`, support)
		if err := json.Unmarshal([]byte(page), &rt); err != nil {
			t.Fatal(err)
		}
		if _, err := newTool(srv, &rt); (err == nil) != offered {
			t.Errorf("taskSupport %q: newTool error %v, want offered %v", support, err, offered)
		}
	}
}

// TestStructuredContentTheTextSaysIsNotRepeated: server-filesystem answers
// read_text_file with the file's text and the structured content
// {"content": <the same text>}; both went to the model, every file read
// costing twice its size. Structured content whose values are all strings
// the text holds is left out; any other still follows the text.
func TestStructuredContentTheTextSaysIsNotRepeated(t *testing.T) {
	file := "line one\nline \"two\"\n"
	sc, _ := json.Marshal(map[string]any{"content": file})
	if got := renderResult(&callToolResult{Content: []content{{Type: "text", Text: file}}, StructuredContent: sc}); got != file {
		t.Errorf("file read rendered as %q, want the file's text once", got)
	}
	for _, tc := range []struct{ text, sc string }{
		{"hello", `{"content":"hello","size":5}`},   // a number the text may not say
		{"hello", `{"content":"hello","more":"x"}`}, // a string it does not hold
		{"", `{"content":""}`},                      // no text at all
	} {
		if got := renderResult(&callToolResult{Content: []content{{Type: "text", Text: tc.text}}, StructuredContent: json.RawMessage(tc.sc)}); !strings.Contains(got, "structured content: ") {
			t.Errorf("text %q, structured %s: rendered %q without the structured content", tc.text, tc.sc, got)
		}
	}
}
