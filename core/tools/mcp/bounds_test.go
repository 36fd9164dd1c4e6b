package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestServerRequestsDoNotPileUp: a server that sends requests by the
// thousand and never reads the answers (its stdin) does not make the
// client hold a goroutine and an answer for each: past maxAnswering
// waiting answers, its requests are left out.
func TestServerRequestsDoNotPileUp(t *testing.T) {
	s := newScripted(t)
	done := s.call(context.Background())
	req := s.read(t) // then nothing more is read: every answer blocks
	before := runtime.NumGoroutine()
	const n = 5000
	var batch strings.Builder
	batch.WriteByte('[')
	for i := range n {
		if i > 0 {
			batch.WriteByte(',')
		}
		fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":"s%d","method":"roots/list"}`, i)
	}
	batch.WriteByte(']')
	// The second line is read once the first was handled whole.
	s.write(t, batch.String(), `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{}}`)
	if err := <-done; err != nil {
		t.Fatalf("ping = %v", err)
	}
	if grew := runtime.NumGoroutine() - before; grew > 2*maxAnswering {
		t.Errorf("%d goroutines more after %d requests of the server nobody reads the answers of; want at most %d", grew, n, 2*maxAnswering)
	}
}

// TestHostileSessionIDIsRefused: the session id a Streamable HTTP server
// gives is sent back with every request: one over maxSessionID bytes, or
// not of the visible ASCII characters the spec allows, fails the
// initialisation instead.
func TestHostileSessionIDIsRefused(t *testing.T) {
	for name, id := range map[string]string{
		"long":  strings.Repeat("a", maxSessionID+1),
		"space": "a b",
		"utf-8": "sessión",
	} {
		t.Run(name, func(t *testing.T) {
			var sent atomic.Int64 // the longest session id the client sent back
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				sent.Store(max(sent.Load(), int64(len(r.Header.Get(sessionHeader)))))
				var m message
				if err := json.NewDecoder(r.Body).Decode(&m); err != nil || len(m.ID) == 0 {
					w.WriteHeader(http.StatusAccepted)
					return
				}
				w.Header().Set(sessionHeader, id)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q}}`, m.ID, protocolVersion)
			}))
			defer ts.Close()
			c := newConn(zerolog.Nop(), nil)
			newHTTPTransport(c, ts.URL, &http.Client{Transport: newHeaderTransport(nil, ts.URL, http.DefaultTransport)})
			cs := &clientSession{c: c}
			defer cs.Close()
			err := cs.initialize(context.Background())
			if err == nil || !strings.Contains(err.Error(), "session id") {
				t.Errorf("initialize = %v, want the session id refused (the client sent back %d bytes of it)", err, sent.Load())
			}
		})
	}
}

// TestToolsLeftOutAreNotLoggedOneByOne: a page of thousands of tools that
// cannot be offered (on every notifications/tools/list_changed) does not
// write a warning for each, nor a tool's whole name.
func TestToolsLeftOutAreNotLoggedOneByOne(t *testing.T) {
	s := newScripted(t)
	logs := &testutil.SyncBuffer{}
	srv := newServer(ServerConfig{Name: "x"}, nil, zerolog.New(logs))
	done := make(chan error, 1)
	go func() {
		_, err := srv.list(context.Background(), s.cs)
		done <- err
	}()
	req := s.read(t)
	const n = 3000
	var page strings.Builder
	for i := range n {
		if i > 0 {
			page.WriteByte(',')
		}
		fmt.Fprintf(&page, `{"name":"t%d%s","inputSchema":{"type":"string"}}`, i, strings.Repeat("n", 2<<10))
	}
	s.write(t, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"tools":[`+page.String()+`]}}`)
	if err := <-done; err != nil {
		t.Fatalf("list = %v", err)
	}
	lines := strings.Count(logs.String(), "\n")
	if lines > 2*maxLeftOutLogged || len(logs.String()) > 64<<10 {
		t.Errorf("%d log lines, %d bytes for %d tools left out; want at most %d lines", lines, len(logs.String()), n, 2*maxLeftOutLogged)
	}
	if !strings.Contains(logs.String(), `"left_out":3000`) {
		t.Errorf("the tools left out are not counted:\n%.2000s", logs.String())
	}
}

// TestCloseDoesNotWaitForABlockedWrite: closing the session of a stdio
// server that does not read its input ends a request being written to it
// at once, rather than waiting for the request's own context (a tool's
// timeout, or none).
func TestCloseDoesNotWaitForABlockedWrite(t *testing.T) {
	s := newScripted(t) // which never reads the ping
	done := s.call(context.Background())
	st := s.cs.c.t.(*stdioTransport)
	testutil.WaitFor(t, "the ping being written", func() bool {
		if st.wmu.TryLock() {
			st.wmu.Unlock()
			return false
		}
		return true
	})
	closed := make(chan struct{})
	go func() {
		s.cs.Close()
		close(closed)
	}()
	testutil.WaitFor(t, "the session closed", func() bool {
		select {
		case <-closed:
			return true
		default:
			return false
		}
	})
	if err := <-done; err == nil {
		t.Error("the ping succeeded")
	}
}

// TestHugePatternIsRefused: a schema's pattern of thousands of Unicode
// classes (within the 32 KiB a schema may have) took most of a second to
// compile at every listing and seconds to match one argument; one over
// maxPattern bytes or maxPatternInsts instructions keeps the tool out.
func TestHugePatternIsRefused(t *testing.T) {
	for name, p := range map[string]string{
		"long":  strings.Repeat(`\\p{L}`, 5000),
		"large": strings.Repeat(`\\pL{2,9}`, 100),
	} {
		schema := `{"type":"object","properties":{"a":{"type":"string","pattern":"` + p + `"}},` +
			`"patternProperties":{"x":{}}}`
		if _, _, err := convertSchema(json.RawMessage(schema)); err == nil || !strings.Contains(err.Error(), "pattern") {
			t.Errorf("%s pattern: convertSchema = %v, want it refused", name, err)
		}
		schema = `{"type":"object","patternProperties":{"` + p + `":{}}}`
		if _, _, err := convertSchema(json.RawMessage(schema)); err == nil || !strings.Contains(err.Error(), "pattern") {
			t.Errorf("%s property name pattern: convertSchema = %v, want it refused", name, err)
		}
	}
	if _, _, err := convertSchema(json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","pattern":"^[\\w.+-]+@[\\w-]+(\\.[\\w-]+)+$"}}}`)); err != nil {
		t.Errorf("an e-mail pattern: %v", err)
	}
}

// TestUnknownTypeIsRefused: a schema naming a type JSON Schema does not
// have ("", "any", "int") made every value at that place fail, and
// jsonschema-go read "" as no type (FuzzValidatorAgreesWithJSONSchemaGo
// found it); such a schema keeps its tool out, like any malformed one.
func TestUnknownTypeIsRefused(t *testing.T) {
	for _, typ := range []string{`""`, `"any"`, `"int"`, `["string",""]`} {
		schema := `{"type":"object","properties":{"a":{"type":` + typ + `}}}`
		if _, _, err := convertSchema(json.RawMessage(schema)); err == nil {
			t.Errorf("type %s: convertSchema = nil, want it refused", typ)
		}
	}
	for _, typ := range []string{`"null"`, `"boolean"`, `"object"`, `"array"`, `"number"`, `"string"`, `"integer"`, `["string","null"]`} {
		schema := `{"type":"object","properties":{"a":{"type":` + typ + `}}}`
		if _, _, err := convertSchema(json.RawMessage(schema)); err != nil {
			t.Errorf("type %s: %v", typ, err)
		}
	}
}
