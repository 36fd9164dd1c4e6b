package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// renderResult turns a tool's result into the text the model reads: text
// as it is, embedded text resources with their URI, images, audio and
// binary resources summarised with their type and size, and the structured
// content as JSON when the text does not already say it.
func renderResult(r *sdk.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *sdk.ResourceLink:
			size := ""
			if c.Size != nil {
				size = fmt.Sprintf(", %d bytes", *c.Size)
			}
			parts = append(parts, fmt.Sprintf("[resource link %s (%s%s)]", c.URI, orUnknown(c.MIMEType), size))
		case *sdk.EmbeddedResource:
			parts = append(parts, renderResource(c.Resource))
		default:
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	text := strings.Join(parts, "\n")
	if r.StructuredContent != nil {
		b, err := json.Marshal(r.StructuredContent)
		if err == nil && !jsonEqual(b, text) {
			if text != "" {
				text += "\n"
			}
			text += "structured content: " + string(b)
		}
	}
	return text
}

func renderResource(rc *sdk.ResourceContents) string {
	switch {
	case rc == nil:
		return "[resource]"
	case rc.Blob != nil:
		return fmt.Sprintf("[resource %s (%s, %d bytes)]", rc.URI, orUnknown(rc.MIMEType), len(rc.Blob))
	}
	return fmt.Sprintf("[resource %s (%s)]\n%s", rc.URI, orUnknown(rc.MIMEType), rc.Text)
}

// jsonEqual reports whether text is the JSON value b, however spaced.
func jsonEqual(b []byte, text string) bool {
	var x, y any
	if json.Unmarshal(b, &x) != nil || json.Unmarshal([]byte(text), &y) != nil {
		return false
	}
	bx, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return string(bx) == string(by)
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}
