package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// renderResult turns a tool's result into the text the model reads: text
// as it is, embedded text resources with their URI, images, audio and
// binary resources summarised with their type and size, and the structured
// content as JSON when the text does not already say it.
func renderResult(r *callToolResult) string {
	var parts []string
	for _, c := range r.Content {
		switch c.Type {
		case "text":
			parts = append(parts, c.Text)
		case "image", "audio":
			parts = append(parts, fmt.Sprintf("[%s %s, %d bytes]", c.Type, orUnknown(c.MIMEType), decodedLen(c.Data)))
		case "resource_link":
			size := ""
			if c.Size != nil {
				size = fmt.Sprintf(", %d bytes", *c.Size)
			}
			parts = append(parts, fmt.Sprintf("[resource link %s (%s%s)]", c.URI, orUnknown(c.MIMEType), size))
		case "resource":
			parts = append(parts, renderResource(c.Resource))
		default:
			parts = append(parts, fmt.Sprintf("[%q content]", c.Type))
		}
	}
	text := strings.Join(parts, "\n")
	if s := structured(r.StructuredContent); s != nil {
		if !jsonEqual(s, text) && !saidBy(s, text) {
			if text != "" {
				text += "\n"
			}
			text += "structured content: " + string(s)
		}
	}
	return text
}

// structured is the structured content as JSON with its object keys
// sorted, or nil when there is none.
func structured(raw json.RawMessage) []byte {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// saidBy reports whether the structured content s says nothing text does
// not: text is not empty and s's values are all strings text holds
// verbatim, at most maxSaidLeaves of them (each is looked for in the whole
// text). server-filesystem answers a file's text both as text and as
// {"content": text}; said twice, every file read would cost the model
// twice its size.
func saidBy(s []byte, text string) bool {
	var v any
	if text == "" || json.Unmarshal(s, &v) != nil {
		return false
	}
	budget := maxSaidLeaves
	return stringsIn(v, text, &budget)
}

// maxSaidLeaves bounds the values saidBy looks for in the text.
const maxSaidLeaves = 16

// stringsIn reports whether every leaf of the JSON value v is a string
// that text holds, within budget leaves.
func stringsIn(v any, text string, budget *int) bool {
	switch v := v.(type) {
	case string:
		*budget--
		return *budget >= 0 && strings.Contains(text, v)
	case map[string]any:
		for _, e := range v {
			if !stringsIn(e, text, budget) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range v {
			if !stringsIn(e, text, budget) {
				return false
			}
		}
		return true
	}
	return false
}

// decodedLen is the size of base64 data once decoded.
func decodedLen(data string) int {
	if b, err := base64.StdEncoding.DecodeString(data); err == nil {
		return len(b)
	}
	return base64.StdEncoding.DecodedLen(len(data))
}

func renderResource(rc *resourceContents) string {
	switch {
	case rc == nil:
		return "[resource]"
	case rc.Blob != nil:
		return fmt.Sprintf("[resource %s (%s, %d bytes)]", rc.URI, orUnknown(rc.MIMEType), decodedLen(*rc.Blob))
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
