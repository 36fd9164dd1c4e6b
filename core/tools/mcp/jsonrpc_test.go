package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// scripted is a server a test plays by hand over pipes: it reads what the
// client sends and writes what it likes.
type scripted struct {
	cs    *clientSession
	logs  *testutil.SyncBuffer
	notes chan string // the notifications the client was given
	in    *bufio.Reader
	out   io.WriteCloser
}

func newScripted(t *testing.T) *scripted {
	t.Helper()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	s := &scripted{logs: &testutil.SyncBuffer{}, notes: make(chan string, 16), in: bufio.NewReader(toServer), out: fromServer}
	c := newConn(zerolog.New(s.logs).Level(zerolog.DebugLevel), func(m string) { s.notes <- m })
	pipeStdio(c, toClient, fromClient)
	s.cs = &clientSession{c: c}
	t.Cleanup(func() {
		fromServer.Close()
		s.cs.Close()
	})
	return s
}

// read returns the next message the client sent.
func (s *scripted) read(t *testing.T) message {
	t.Helper()
	line, err := s.in.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading the client: %v", err)
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("the client sent %q: %v", line, err)
	}
	return m
}

func (s *scripted) write(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(s.out, l+"\n"); err != nil {
			t.Fatalf("writing to the client: %v", err)
		}
	}
}

// call runs a ping in the background.
func (s *scripted) call(ctx context.Context) chan error {
	done := make(chan error, 1)
	go func() { done <- s.cs.ping(ctx) }()
	return done
}

// TestMalformedLinesAreLeftOut: a line that is not JSON-RPC (a server
// logging to stdout) is left out with a warning; the session goes on.
func TestMalformedLinesAreLeftOut(t *testing.T) {
	s := newScripted(t)
	done := s.call(context.Background())
	req := s.read(t)
	s.write(t, "starting up...", `{"jsonrpc":"2.0","id":`, `[1,2`, `{}`, `[]`, `"just a string"`,
		`{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{}}`)
	if err := <-done; err != nil {
		t.Fatalf("ping = %v", err)
	}
	if !strings.Contains(s.logs.String(), "not JSON-RPC") {
		t.Errorf("no warning logged:\n%s", s.logs.String())
	}
}

// TestCallEndsWithItsContext: a server that never answers holds a call
// only until its context ends, and is told (notifications/cancelled).
func TestCallEndsWithItsContext(t *testing.T) {
	s := newScripted(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := s.call(ctx)
	req := s.read(t)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("ping = %v, want context.Canceled", err)
	}
	n := s.read(t)
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if err := json.Unmarshal(n.Params, &p); n.Method != "notifications/cancelled" || err != nil || string(p.RequestID) != string(req.ID) {
		t.Errorf("after the cancel the client sent %+v (%s)", n, n.Params)
	}
}

// TestAnswerToAnotherIDIsLeftOut: an answer naming no waiting request
// does not answer the call; the right one does (the call's answer is the
// first taken for its id: an error had it been one of the others).
func TestAnswerToAnotherIDIsLeftOut(t *testing.T) {
	s := newScripted(t)
	done := s.call(context.Background())
	req := s.read(t)
	s.write(t, `{"jsonrpc":"2.0","id":999,"error":{"code":-1,"message":"not yours"}}`,
		`{"jsonrpc":"2.0","id":"`+string(req.ID)+`","error":{"code":-1,"message":"a string id"}}`)
	s.write(t, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{}}`)
	if err := <-done; err != nil {
		t.Errorf("ping = %v", err)
	}
}

// TestNotificationsAndRequestsBetweenAnswers: a notification and the
// server's own requests may come before the answer: the notification is
// handed on, a ping answered, anything else refused, and the call still
// gets its answer.
func TestNotificationsAndRequestsBetweenAnswers(t *testing.T) {
	s := newScripted(t)
	done := s.call(context.Background())
	req := s.read(t)
	s.write(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","id":"s1","method":"ping"}`)
	if got := s.read(t); string(got.ID) != `"s1"` || string(got.Result) != "{}" || got.Error != nil {
		t.Errorf("answer to the server's ping = %+v", got)
	}
	s.write(t, `{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}`)
	if got := s.read(t); string(got.ID) != "7" || got.Error == nil || got.Error.Code != codeMethodNotFound {
		t.Errorf("answer to the server's sampling request = %+v", got)
	}
	s.write(t, `[{"jsonrpc":"2.0","method":"notifications/message","params":{}},{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{}}]`)
	if err := <-done; err != nil {
		t.Fatalf("ping = %v", err)
	}
	if n := <-s.notes; n != "notifications/tools/list_changed" {
		t.Errorf("first notification %q", n)
	}
}

// TestServerErrorAnswer: an error answer fails the call with the
// server's code, and "method not found" is told apart (a ping a server
// lacks counts as alive).
func TestServerErrorAnswer(t *testing.T) {
	s := newScripted(t)
	done := s.call(context.Background())
	req := s.read(t)
	s.write(t, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32601,"message":"no ping here"}}`)
	if err := <-done; !isMethodNotFound(err) || !strings.Contains(err.Error(), "no ping here") {
		t.Errorf("ping = %v", err)
	}
}

// TestOverlongLineEndsTheSession: a stdio message over MaxJSONBody ends
// the session, and its calls with it.
func TestOverlongLineEndsTheSession(t *testing.T) {
	s := newScripted(t)
	done := s.call(context.Background())
	s.read(t)
	go func() {
		chunk := strings.Repeat("x", 1<<20)
		for i := 0; i <= MaxJSONBody>>20; i++ {
			if _, err := io.WriteString(s.out, chunk); err != nil {
				return
			}
		}
	}()
	if err := <-done; !errors.Is(err, errLineTooLong) {
		t.Errorf("ping = %v, want the line refused", err)
	}
	if err := s.cs.Wait(); !errors.Is(err, errLineTooLong) {
		t.Errorf("Wait = %v", err)
	}
}

func TestReadSSE(t *testing.T) {
	type ev struct{ event, data string }
	for _, nl := range []string{"\n", "\r\n", "\r"} {
		stream := strings.ReplaceAll(": comment\nevent: message\ndata: {\"a\":\ndata:1}\nid: 3\n\ndata: two\n\nevent: other\ndata: x\n\ndata: last", "\n", nl)
		var got []ev
		err := readSSE(strings.NewReader(stream), 100, func(e string, d []byte) bool {
			got = append(got, ev{e, string(d)})
			return true
		})
		want := []ev{{"message", "{\"a\":\n1}"}, {"", "two"}, {"other", "x"}, {"", "last"}}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: events %q, %v; want %q", nl, got, err, want)
		}
		big := strings.ReplaceAll("data: "+strings.Repeat("x", 60)+"\ndata: "+strings.Repeat("y", 60)+"\n\n", "\n", nl)
		err = readSSE(strings.NewReader(big), 100, func(string, []byte) bool { return true })
		if !errors.Is(err, errEventTooLarge) {
			t.Errorf("%q: an event over the cap: %v", nl, err)
		}
		many := strings.Repeat(strings.ReplaceAll("data: "+strings.Repeat("x", 60)+"\n\n", "\n", nl), 100)
		if err := readSSE(strings.NewReader(many), 100, func(string, []byte) bool { return true }); err != nil {
			t.Errorf("%q: many small events: %v", nl, err)
		}
	}
}

// TestSSEAnswerWithNotificationsBefore: a Streamable HTTP answer as an SSE
// stream carrying a notification and a ping of the server before the
// response; the ping's answer is POSTed back.
func TestSSEAnswerWithNotificationsBefore(t *testing.T) {
	answered := make(chan string, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m message
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if m.Method == "" {
			answered <- string(m.ID) + " " + string(m.Result)
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n\n")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", m.ID)
	}))
	defer ts.Close()
	notes := make(chan string, 4)
	c := newConn(zerolog.Nop(), func(m string) { notes <- m })
	newHTTPTransport(c, ts.URL, ts.Client())
	cs := &clientSession{c: c}
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cs.ping(ctx); err != nil {
		t.Fatalf("ping = %v", err)
	}
	if n := <-notes; n != "notifications/tools/list_changed" {
		t.Errorf("notification %q", n)
	}
	if a := <-answered; a != `"p" {}` {
		t.Errorf("the server's ping was answered %q", a)
	}
}

// TestOverCapHTTPAnswerEndsTheSession: a Streamable HTTP answer over its
// cap ends the session (its tools are withdrawn and it is started again),
// not just the call that read it.
func TestOverCapHTTPAnswerEndsTheSession(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		chunk := []byte(strings.Repeat(" ", 64<<10))
		for n := 0; n <= MaxJSONBody; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer ts.Close()
	c := newConn(zerolog.Nop(), nil)
	newHTTPTransport(c, ts.URL, &http.Client{Transport: newHeaderTransport(nil, ts.URL, http.DefaultTransport)})
	cs := &clientSession{c: c}
	defer cs.Close()
	if err := cs.ping(context.Background()); !errors.Is(err, errBodyTooLarge) {
		t.Fatalf("ping = %v", err)
	}
	if err := cs.Wait(); !errors.Is(err, errBodyTooLarge) {
		t.Errorf("Wait = %v, want the session ended by the cap", err)
	}
}
