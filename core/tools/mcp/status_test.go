package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
)

// TestStatusLinesShowEveryServerOnOneLine: /status gets one line naming
// each server, its transport and its state, in configuration order; a
// failure's error is cut at its first line and at maxStateLen.
func TestStatusLinesShowEveryServerOnOneLine(t *testing.T) {
	m, err := New([]ServerConfig{{Name: "files", Command: "fs"}, {Name: "web", URL: "http://127.0.0.1:1/mcp"}},
		Options{Registry: nopRegistrar{}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.StatusLines(context.Background(), core.Conversation{}); len(got) != 1 ||
		got[0] != "MCP servers: files (stdio) starting; web (http) starting" {
		t.Fatalf("StatusLines = %q", got)
	}
	m.servers[0].setState("failed: exit status 1 (stderr: first line\nsecond line)")
	m.servers[1].setState("failed: " + strings.Repeat("x", 500))
	got := m.StatusLines(context.Background(), core.Conversation{})[0]
	if want := "files (stdio) failed: exit status 1 (stderr: first line …; "; !strings.Contains(got, want) {
		t.Errorf("StatusLines = %q; want the first line only: %q", got, want)
	}
	_, web, _ := strings.Cut(got, "web (http) ")
	if n := strings.Count(web, "x"); n != maxStateLen-len("failed: ") || !strings.HasSuffix(web, " …") {
		t.Errorf("the long state kept %d x's; want it cut at %d runes", n, maxStateLen)
	}
	// A child's stderr is untrusted: no control character reaches chat.
	m.servers[0].setState("failed: \x1b[2Jcleared\rover\u202eevil")
	got = m.StatusLines(context.Background(), core.Conversation{})[0]
	if strings.ContainsAny(got, "\x1b\r\u202e") || !strings.Contains(got, `\x1b[2Jcleared\rover\u202eevil`) {
		t.Errorf("StatusLines = %q; want the control characters shown escaped", got)
	}
	var none Manager
	if got := none.StatusLines(context.Background(), core.Conversation{}); got != nil {
		t.Errorf("no servers: %q", got)
	}
}
