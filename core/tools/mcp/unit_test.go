package mcp

import (
	"regexp"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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
}

func TestRenderResult(t *testing.T) {
	size := int64(2048)
	got := renderResult(&sdk.CallToolResult{
		Content: []sdk.Content{
			&sdk.TextContent{Text: "hello"},
			&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 10)},
			&sdk.ResourceLink{URI: "file:///a.pdf", MIMEType: "application/pdf", Size: &size},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///b.bin", Blob: make([]byte, 7)}},
		},
		StructuredContent: map[string]any{"ok": true},
	})
	for _, want := range []string{"hello", "[image image/png, 10 bytes]", "[resource link file:///a.pdf (application/pdf, 2048 bytes)]",
		"[resource file:///b.bin (unknown type, 7 bytes)]", `structured content: {"ok":true}`} {
		if !strings.Contains(got, want) {
			t.Errorf("result lacks %q:\n%s", want, got)
		}
	}
	if got := renderResult(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"ok": true}`}}, StructuredContent: map[string]any{"ok": true}}); got != `{"ok": true}` {
		t.Errorf("structured content said twice: %q", got)
	}
}
