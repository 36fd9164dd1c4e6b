package mcp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/core/tools/mcp"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestHugeHTTPAnswerFailsTheStart: a Streamable HTTP server's answer was
// read whole, however large (a 1.5 GiB initialize answer took the bot to
// 3 GiB). A JSON answer is capped as a whole and an SSE stream per event;
// the start fails naming the cap. The fake streams its endless answer
// (up to a stop far past the cap, so that an unbounded client ends too)
// and counts what it could write: the client stopped reading near the cap.
func TestHugeHTTPAnswerFailsTheStart(t *testing.T) {
	const stop = 256 << 20 // the fake gives up here
	for _, tc := range []struct {
		name, contentType, head, want string
	}{
		{"json", "application/json", `{"jsonrpc":"2.0","id":1,"result":{"x":"`, "over the 8 MiB"},
		{"sse", "text/event-stream", "event: message\ndata: ", "exceeded 8388608 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var written atomic.Int64
			var handlers sync.WaitGroup
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					http.Error(w, "no", http.StatusMethodNotAllowed)
					return
				}
				handlers.Add(1)
				defer handlers.Done()
				w.Header().Set("Content-Type", tc.contentType)
				if _, err := w.Write([]byte(tc.head)); err != nil {
					return
				}
				chunk := []byte(strings.Repeat("x", 32<<10))
				for written.Load() < stop {
					if _, err := w.Write(chunk); err != nil {
						return
					}
					written.Add(int64(len(chunk)))
				}
			}))
			t.Cleanup(ts.Close)
			r := start(t, tools.Options{}, mcp.ServerConfig{Name: "huge", URL: ts.URL, StartTimeout: time.Minute})
			testutil.WaitFor(t, "the start failed", func() bool {
				return strings.HasPrefix(r.mgr.Statuses()[0].State, "failed: ")
			})
			r.stop()
			handlers.Wait()
			if st := r.mgr.Statuses()[0].State; !strings.Contains(st, tc.want) {
				t.Errorf("state = %q, want it to name the cap (%q)", st, tc.want)
			}
			// The cap, plus what the kernel's socket buffers held.
			if n := written.Load(); n > 48<<20 {
				t.Errorf("the server could write %d MiB: the answer was read past its cap", n>>20)
			}
		})
	}
}
