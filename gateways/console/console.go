// Package console is the terminal gateway: one conversation, console:local,
// on stdin and stdout. It works on a terminal and with piped input.
package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// Name is the console gateway's name.
const Name = "console"

// Identity is the one person the console knows.
const Identity core.Identity = "console:local"

// Conversation returns the console's one conversation, console:local.
func Conversation() core.Conversation { return core.Conversation{Gateway: Name, Chat: "local"} }

// Console reads lines from In and writes replies to Out.
type Console struct {
	in  io.Reader
	out io.Writer
	// prompt is shown before each line the user types; empty when piped.
	prompt string

	mu sync.Mutex // serialises writes to out; guards typed
	// typed is what the user has typed of the line, when keyReader edits
	// it: a notice shows it again after the prompt.
	typed   []byte
	closed  chan struct{}
	once    sync.Once
	running atomic.Bool // Run has started reading
}

var (
	_ gateways.Gateway = (*Console)(nil)
	_ core.Actuator    = (*Console)(nil)
	_ gateways.Readier = (*Console)(nil)
)

// New returns a console on in and out. interactive shows a prompt and a
// greeting; piped input gets neither, so output stays scriptable.
func New(in io.Reader, out io.Writer, interactive bool) *Console {
	c := &Console{in: in, out: out, closed: make(chan struct{})}
	if interactive {
		c.prompt = "you › "
	}
	return c
}

// Name implements gateways.Gateway.
func (c *Console) Name() string { return Name }

// EndOfInput is closed when the console's input ends (Ctrl-D or the end of
// piped input).
func (c *Console) EndOfInput() <-chan struct{} { return c.closed }

// Ready reports whether Run has started reading the input. The end of the
// input does not make the console unready: the other gateways go on
// serving, and a bot whose only gateway is the console stops then.
func (c *Console) Ready() error {
	if !c.running.Load() {
		return errors.New("console: not reading yet")
	}
	return nil
}

// Run reads lines until the input ends or ctx ends, submitting each
// non-empty line as a message from console:local. A line longer than
// MaxLine is cut, and the user told so. On an interactive terminal the
// console edits the line itself (keyReader), so a long paste arrives
// whole rather than cut at the terminal's 4,095 bytes; Run puts the
// terminal back as it found it before it returns. Run returns nil at the
// end of input and when the engine stops (shutdown); it returns an error
// when reading fails. Reading stdin cannot be interrupted, so on
// cancellation Run returns at once and leaves the reader goroutine blocked
// until the process exits.
func (c *Console) Run(ctx context.Context, inbox gateways.Inbox) error {
	next := newLineReader(c.in).next
	if f, ok := c.in.(*os.File); ok && c.prompt != "" {
		if leave, err := enterKeyMode(f); err == nil {
			defer leave()
			next = newKeyReader(c).next
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a reader blocked on sending a line gives up
	lines := make(chan string)
	readErr := make(chan error, 1)
	go c.read(ctx, next, lines, readErr)
	c.running.Store(true)
	if c.prompt != "" {
		c.write("gatehouse console — type a message, /pending for approvals, /attach PATH to send a file, Ctrl-D to quit.\n" + c.prompt)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				if err := <-readErr; err != nil {
					return fmt.Errorf("console: read: %w", err)
				}
				c.once.Do(func() { close(c.closed) })
				return nil
			}
			if err := c.submit(ctx, inbox, line); err != nil {
				return err
			}
		}
	}
}

// submit hands one line to the engine. An engine that has stopped, or ctx
// ending, is a shutdown, not an error.
// An /attach line sends a local file as an attachment.
func (c *Console) submit(ctx context.Context, inbox gateways.Inbox, line string) error {
	s := core.Signal{Kind: core.KindMessage, Conv: Conversation(), From: Identity, Text: line, Private: true}
	if path, caption, ok := parseAttach(line); ok {
		if s, ok = c.attachSignal(path, caption); !ok {
			return nil
		}
	}
	err := inbox.Submit(ctx, s)
	if err == nil || errors.Is(err, core.ErrStopped) || ctx.Err() != nil {
		return nil
	}
	if gateways.Unavailable(err) {
		c.notice(gateways.UnavailableNote)
		return nil
	}
	return fmt.Errorf("console: submit: %w", err)
}

// read sends each non-empty line next returns, trimmed, to lines until the
// input ends or ctx ends. Before closing lines it sends the read error to
// errc: nil at the end of input or on cancellation.
func (c *Console) read(ctx context.Context, next func() (string, bool, error), lines chan<- string, errc chan<- error) {
	var err error
	defer func() {
		errc <- err
		close(lines)
	}()
	for {
		var line string
		var cut bool
		line, cut, err = next()
		if cut {
			c.notice(tooLongNotice)
		}
		if line = strings.TrimSpace(line); line != "" {
			select {
			case lines <- line:
			case <-ctx.Done():
				err = nil
				return
			}
		} else if err == nil {
			c.write(c.prompt)
		}
		if errors.Is(err, io.EOF) {
			err = nil
			return
		}
		if err != nil {
			return
		}
	}
}

// Act prints a reply. The console has no buttons: an approval request
// reaches it as a reply whose last line says how to answer. Replies carry
// text from the model, tools and remote users, so every control character
// in them is shown escaped (textutil.Visible), never sent to the terminal.
// A reply the core or the broker wrote with its untrusted parts already
// escaped (Action.Escaped) has its remaining controls escaped, but its
// escapes are not escaped a second time (textutil.VisibleEscaped).
func (c *Console) Act(_ context.Context, a core.Action) (core.Result, error) {
	if a.Kind != core.ActionReply {
		return core.Result{}, fmt.Errorf("console: cannot %s", a.Kind)
	}
	if a.Escaped {
		c.notice(textutil.VisibleEscaped(a.Text))
	} else {
		c.notice(textutil.Visible(a.Text))
	}
	return core.Result{}, nil
}

// notice prints text as the bot's, then the prompt again, followed by
// what the user had typed of the line.
func (c *Console) notice(text string) {
	var b strings.Builder
	if c.prompt != "" {
		b.WriteString("\r")
	}
	b.WriteString("gatehouse › ")
	b.WriteString(strings.TrimRight(text, "\n"))
	b.WriteString("\n")
	b.WriteString(c.prompt)
	c.mu.Lock()
	defer c.mu.Unlock()
	b.Write(c.typed)
	io.WriteString(c.out, b.String()) //nolint:errcheck // a closed terminal has no one to tell
}

func (c *Console) write(s string) {
	if s == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	io.WriteString(c.out, s) //nolint:errcheck // a closed terminal has no one to tell
}
