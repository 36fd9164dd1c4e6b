package mcp

import (
	"bytes"
	"context"
	"testing"

	"github.com/rs/zerolog"
)

// discard is a transport that sends nowhere.
type discard struct{}

func (discard) send(context.Context, []byte, int64) error { return nil }
func (discard) close() error                              { return nil }

// FuzzServerOutput feeds what a server writes, the server's to choose, to
// the SSE reader and the stdio line reader, and each frame to the
// JSON-RPC dispatch: never a panic, never an event or a line over its
// cap, and a request waiting gets at most one answer.
func FuzzServerOutput(f *testing.F) {
	for _, s := range []string{
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\r\n\r\ndata: [{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\"}]\r\r",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"m\"}}\n{\"id\":null}\n",
		": only a comment\ndata\ndata:\n\n",
		"data: " + string(bytes.Repeat([]byte("x"), 300)) + "\n\n",
		"[{\"id\":1,\"result\":1},{\"id\":1,\"result\":2}]\n",
	} {
		f.Add([]byte(s))
	}
	const max = 256
	f.Fuzz(func(t *testing.T, data []byte) {
		c := newConn(zerolog.Nop(), nil)
		c.t = discard{}
		defer c.close()
		ch := make(chan *message, 1)
		c.pending[1] = ch
		answers := 0
		err := readSSE(bytes.NewReader(data), max, func(_ string, d []byte) bool {
			if len(d) > max {
				t.Fatalf("an event of %d bytes, over %d", len(d), max)
			}
			if c.deliver(d, 1) {
				answers++
			}
			return true
		})
		if err != nil && err != errEventTooLarge {
			t.Fatalf("readSSE = %v", err)
		}
		c.pending[1] = ch
		err = readLines(bytes.NewReader(data), max, func(line []byte) {
			if len(line) > max {
				t.Fatalf("a line of %d bytes, over %d", len(line), max)
			}
			if c.deliver(line, 1) {
				answers++
			}
		})
		if err != nil && err != errLineTooLong {
			t.Fatalf("readLines = %v", err)
		}
		if answers > 2 {
			t.Fatalf("%d answers to one request from two readings", answers)
		}
	})
}
