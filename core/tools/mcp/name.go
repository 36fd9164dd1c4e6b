package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// maxToolName is the longest function name the OpenAI API accepts.
const maxToolName = 64

// ToolName is the name a server's tool is offered under:
// "mcp__<server>__<tool>", or, when that is over 64 characters or has a
// character outside [A-Za-z0-9_-], the tool's part cleaned and cut and
// followed by "_" and 8 hex digits of the SHA-256 of the tool's own name,
// so the same tool gets the same name on every start. server must pass
// CheckName.
func ToolName(server, tool string) string {
	prefix := core.MCPPrefix + server + "__"
	if name := prefix + tool; textutil.Shape(name, 1, maxToolName, textutil.Word) {
		return name
	}
	sum := sha256.Sum256([]byte(tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	clean := cleanName(tool)
	if keep := maxToolName - len(prefix) - len(suffix); len(clean) > keep {
		clean = clean[:keep]
	}
	return prefix + clean + suffix
}

// ServerOf returns the server part of a name ToolName made, and whether
// name is one.
func ServerOf(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, core.MCPPrefix)
	if !ok {
		return "", false
	}
	server, _, ok := strings.Cut(rest, "__")
	return server, ok && server != ""
}

// cleanName replaces each character of s outside [A-Za-z0-9_-] with '_'
// (one '_' for a multi-byte character, and for each byte that is not
// UTF-8).
func cleanName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 0x80 && textutil.Shape(string(r), 1, 1, textutil.Word) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
