package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core/tools"
)

// JSON-RPC 2.0 error codes this client sends or reads.
const (
	codeMethodNotFound = -32601
	codeInvalidRequest = -32600
)

// message is one JSON-RPC 2.0 message: a request (Method and ID), a
// notification (Method only) or a response (ID with Result or Error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error answer: the server's own words, untrusted.
type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("the server answered error %d: %s", e.Code, tools.Truncate(e.Message, maxErrorText))
}

// maxErrorText caps the server's words kept in an error.
const maxErrorText = 300

// transport carries a conn's messages to the server. send sends one
// message; for a request (id > 0) on a transport that answers in the
// request's own stream (Streamable HTTP), send reads that stream, handing
// each message to the conn, until the answer to id came (it returns nil)
// or the stream ended (errNoAnswer). close ends the transport and what it
// started.
type transport interface {
	send(ctx context.Context, msg []byte, id int64) error
	close() error
}

// errNoAnswer: the server's answer stream ended without the response.
var errNoAnswer = errors.New("the server's answer ended without a response")

// errClosed ends the calls of a session that was closed.
var errClosed = errors.New("the session was closed")

// conn is one JSON-RPC session with an MCP server: it numbers requests,
// matches answers to them, answers the server's requests and hands its
// notifications to onNotify.
type conn struct {
	t        transport
	log      zerolog.Logger
	onNotify func(method string)

	ctx    context.Context // ends with the conn: its own sends in the background
	cancel context.CancelFunc
	nextID atomic.Int64
	warned atomic.Bool // a message was left out: the next ones are logged at debug level

	answering chan struct{} // one per answer to the server being sent (maxAnswering)

	mu      sync.Mutex
	pending map[int64]chan *message
	done    chan struct{} // closed once the conn ended
	err     error         // why it ended
}

func newConn(log zerolog.Logger, onNotify func(string)) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	if onNotify == nil {
		onNotify = func(string) {}
	}
	return &conn{log: log, onNotify: onNotify, ctx: ctx, cancel: cancel,
		answering: make(chan struct{}, maxAnswering), pending: map[int64]chan *message{}, done: make(chan struct{})}
}

// end ends the conn (once) for err: every waiting call fails with it.
func (c *conn) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
		return
	default:
	}
	c.err = err
	close(c.done)
	c.cancel()
}

// ended returns why the conn ended, or nil.
func (c *conn) ended() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// close ends the conn and its transport.
func (c *conn) close() error {
	c.end(errClosed)
	return c.t.close()
}

// wait returns once the conn ended (the server exited, or close).
func (c *conn) wait() error {
	<-c.done
	return c.ended()
}

// call sends a request and decodes its result into out (nil: dropped).
// When ctx ends first the server is told (notifications/cancelled).
func (c *conn) call(ctx context.Context, method string, params, out any) error {
	id := c.nextID.Add(1)
	ch := make(chan *message, 1)
	c.mu.Lock()
	if err := c.errLocked(); err != nil {
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if err := c.t.send(ctx, b, id); err != nil {
		select {
		case m := <-ch:
			return decodeResult(method, m, out)
		default:
		}
		if ctx.Err() != nil {
			c.cancelled(id, ctx.Err())
			return fmt.Errorf("%s: %w", method, ctx.Err())
		}
		return fmt.Errorf("sending %s: %w", method, err)
	}
	select {
	case m := <-ch:
		return decodeResult(method, m, out)
	case <-ctx.Done():
		c.cancelled(id, ctx.Err())
		return fmt.Errorf("%s: %w", method, ctx.Err())
	case <-c.done:
		select {
		case m := <-ch:
			return decodeResult(method, m, out)
		default:
		}
		return fmt.Errorf("%s: %w", method, c.ended())
	}
}

func (c *conn) errLocked() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

func decodeResult(method string, m *message, out any) error {
	if m.Error != nil {
		return fmt.Errorf("%s: %w", method, m.Error)
	}
	if out == nil || len(m.Result) == 0 {
		return nil
	}
	if err := json.Unmarshal(m.Result, out); err != nil {
		return fmt.Errorf("%s: the server's result: %w", method, err)
	}
	return nil
}

// maxAnswering bounds the answers to the server's requests being sent at
// once: a server that sends requests by the thousand and does not read
// the answers (a stdio child that never reads its stdin) would otherwise
// hold a goroutine and an answer of the client's for each. Its requests
// past it are left out, unanswered.
const maxAnswering = 16

// cancelGrace bounds the sending of a notification after its call ended.
const cancelGrace = 5 * time.Second

// cancelled tells the server, in the background, that request id is no
// longer wanted.
func (c *conn) cancelled(id int64, why error) {
	go func() {
		ctx, cancel := context.WithTimeout(c.ctx, cancelGrace)
		defer cancel()
		_ = c.notify(ctx, "notifications/cancelled", map[string]any{"requestId": id, "reason": why.Error()})
	}()
}

// notify sends a notification.
func (c *conn) notify(ctx context.Context, method string, params any) error {
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if err := c.t.send(ctx, b, 0); err != nil {
		return fmt.Errorf("sending %s: %w", method, err)
	}
	return nil
}

// deliver handles what the server sent: one message or a batch of them.
// It reports whether the answer to request id was among them.
func (c *conn) deliver(data []byte, id int64) bool {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return false
	}
	if data[0] != '[' {
		return c.deliverOne(data, id)
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(data, &batch); err != nil {
		c.leftOut(err, "mcp server sent a batch that is not JSON; left out")
		return false
	}
	answered := false
	for _, m := range batch {
		answered = c.deliverOne(m, id) || answered
	}
	return answered
}

func (c *conn) deliverOne(data []byte, id int64) bool {
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		c.leftOut(err, "mcp server sent a message that is not JSON-RPC; left out")
		return false
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method != "" && hasID:
		select {
		case c.answering <- struct{}{}:
			go func() {
				defer func() { <-c.answering }()
				c.answer(m.ID, m.Method)
			}()
		default:
			c.leftOut(nil, "mcp server sent more requests than the client answers at once; left out")
		}
	case m.Method != "":
		c.onNotify(m.Method)
	case hasID:
		return c.respond(&m) == id && id > 0
	default:
		c.leftOut(nil, "mcp server sent a message that is neither a request, a notification nor a response; left out")
	}
	return false
}

// leftOut logs a message of the server left out: the first at warning
// level, the next at debug (a server writing its logs to stdout would
// fill the bot's).
func (c *conn) leftOut(err error, msg string) {
	ev := c.log.Debug()
	if !c.warned.Swap(true) {
		ev = c.log.Warn()
	}
	ev.Err(err).Msg(msg)
}

// respond hands a response to the request it answers and returns that
// request's id (0: it answers none waiting).
func (c *conn) respond(m *message) int64 {
	n, err := strconv.ParseInt(string(m.ID), 10, 64)
	c.mu.Lock()
	ch, ok := c.pending[n]
	delete(c.pending, n)
	c.mu.Unlock()
	if err != nil || !ok {
		c.log.Debug().Str("id", tools.Truncate(string(m.ID), 40)).Msg("mcp server answered no request waiting; left out")
		return 0
	}
	ch <- m // buffered, and removed from pending: sent once
	return n
}

// answer answers a request of the server: a ping, or an error for
// whatever else (this client offers no roots, sampling or elicitation).
func (c *conn) answer(id json.RawMessage, method string) {
	reply := map[string]any{"jsonrpc": "2.0", "id": id}
	if method == "ping" {
		reply["result"] = struct{}{}
	} else {
		reply["error"] = rpcError{Code: codeMethodNotFound, Message: "method not supported by this client"}
	}
	b, err := json.Marshal(reply)
	if err != nil {
		reply = map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcError{Code: codeInvalidRequest, Message: "invalid request id"}}
		b, _ = json.Marshal(reply)
	}
	ctx, cancel := context.WithTimeout(c.ctx, cancelGrace)
	defer cancel()
	if err := c.t.send(ctx, b, 0); err != nil && c.ctx.Err() == nil {
		c.log.Debug().Err(err).Str("method", tools.Truncate(method, 64)).Msg("mcp answer to the server's request not sent")
	}
}
