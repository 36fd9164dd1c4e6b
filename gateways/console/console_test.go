package console_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways/console"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

type inbox chan core.Signal

func (in inbox) Submit(_ context.Context, s core.Signal) error {
	in <- s
	return nil
}

func TestPipedLinesBecomeSignalsAndEndOfInputIsSignalled(t *testing.T) {
	out := &testutil.SyncBuffer{}
	c := console.New(strings.NewReader("hello\n\n  /pending  \n"), out, false)
	in := make(inbox, 10)
	if err := c.Run(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.EndOfInput():
	case <-time.After(5 * time.Second):
		t.Fatal("end of input not signalled")
	}
	close(in)
	var got []string
	for s := range in {
		if s.Kind != core.KindMessage || s.From != console.Identity || s.Conv.Key() != "console:local" || !s.Private {
			t.Errorf("signal = %+v", s)
		}
		got = append(got, s.Text)
	}
	if strings.Join(got, "|") != "hello|/pending" {
		t.Fatalf("signals = %q (blank lines skipped, spaces trimmed)", got)
	}
	if out.String() != "" {
		t.Fatalf("piped console printed a prompt: %q", out.String())
	}
}

func TestRepliesArePrintedAsLines(t *testing.T) {
	out := &testutil.SyncBuffer{}
	c := console.New(strings.NewReader(""), out, false)
	for _, text := range []string{"first\n", "second\nline"} {
		a := core.Action{Kind: core.ActionReply, Conv: console.Conversation(), Text: text}
		if _, err := c.Act(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	want := "gatehouse › first\ngatehouse › second\nline\n"
	if out.String() != want {
		t.Fatalf("output = %q, want %q", out.String(), want)
	}
	if _, err := c.Act(context.Background(), core.Action{Kind: core.ActionTool}); err == nil {
		t.Fatal("a tool action must be refused")
	}
}

func TestInteractiveShowsPrompt(t *testing.T) {
	out := &testutil.SyncBuffer{}
	c := console.New(strings.NewReader("hi\n"), out, true)
	in := make(inbox, 1)
	if err := c.Run(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "you › ") {
		t.Fatalf("no prompt in %q", out.String())
	}
}

func TestCancelStopsRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r, w := ioPipe(t)
	defer w.Close()
	c := console.New(r, &testutil.SyncBuffer{}, false)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, make(inbox)) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return on cancel")
	}
}

func ioPipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, w
}

// TestLongLineIsCutAndReadingGoesOn: a line over MaxLine is cut to MaxLine
// (never in the middle of a character), the user is told, and the lines
// after it still arrive; a line of exactly MaxLine is not cut.
func TestLongLineIsCutAndReadingGoesOn(t *testing.T) {
	long := "x" + strings.Repeat("é", console.MaxLine/2+10) // the cut falls inside an é
	exact := strings.Repeat("y", console.MaxLine)
	out := &testutil.SyncBuffer{}
	c := console.New(strings.NewReader(long+"\nnext\n"+exact+"\nlast"), out, false)
	in := make(inbox, 10)
	if err := c.Run(context.Background(), in); err != nil {
		t.Fatalf("Run = %v; want nil at the end of input", err)
	}
	close(in)
	var got []string
	for s := range in {
		got = append(got, s.Text)
	}
	if len(got) != 4 || got[1] != "next" || got[2] != exact || got[3] != "last" {
		t.Fatalf("got %d lines (%v…); want the cut line, next, the exact line, last", len(got), short(got))
	}
	if len(got[0]) > console.MaxLine || len(got[0]) < console.MaxLine-3 || !utf8.ValidString(got[0]) || !strings.HasPrefix(long, got[0]) {
		t.Errorf("cut line: %d bytes, valid UTF-8 %v; want a valid prefix of at most %d bytes", len(got[0]), utf8.ValidString(got[0]), console.MaxLine)
	}
	if n := strings.Count(out.String(), "line too long: cut to 1 MiB"); n != 1 {
		t.Errorf("output %q tells about the cut %d times; want once", out.String(), n)
	}
}

func short(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l[:min(len(l), 10)]
	}
	return out
}

// failingReader returns its data, then err.
type failingReader struct {
	data string
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestReadErrorIsReturned: a failing input is an error from Run, not a
// silent end of input; what was read before it is submitted.
func TestReadErrorIsReturned(t *testing.T) {
	boom := errors.New("input/output error")
	c := console.New(&failingReader{data: "first\nhalf", err: boom}, &testutil.SyncBuffer{}, false)
	in := make(inbox, 10)
	err := c.Run(context.Background(), in)
	if !errors.Is(err, boom) {
		t.Fatalf("Run = %v; want the read error", err)
	}
	close(in)
	var got []string
	for s := range in {
		got = append(got, s.Text)
	}
	if strings.Join(got, "|") != "first|half" {
		t.Errorf("submitted %q; want first|half", got)
	}
	select {
	case <-c.EndOfInput():
		t.Error("a read error was reported as the end of input")
	default:
	}
}

// errInbox fails every Submit with err.
type errInbox struct{ err error }

func (in errInbox) Submit(context.Context, core.Signal) error { return in.err }

// TestSubmitFailures: an engine that stopped (shutdown) ends Run without an
// error; any other failure is returned.
func TestSubmitFailures(t *testing.T) {
	other := errors.New("queue broken")
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"engine stopped", fmt.Errorf("core: submit to console:local: %w", core.ErrStopped), nil},
		{"other", other, other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := console.New(strings.NewReader("hello\nagain\n"), &testutil.SyncBuffer{}, false)
			err := c.Run(context.Background(), errInbox{tc.err})
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Run = %v; want %v", err, tc.want)
			}
		})
	}
}

// TestSubmitCancelledIsShutdown: a Submit that fails because ctx ended is
// a shutdown: Run returns nil.
func TestSubmitCancelledIsShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := console.New(strings.NewReader("hello\n"), &testutil.SyncBuffer{}, false)
	in := cancelInbox(cancel)
	if err := c.Run(ctx, in); err != nil {
		t.Fatalf("Run = %v; want nil when ctx ended during Submit", err)
	}
}

// cancelInbox ends the context and fails as an engine's Submit does then.
type cancelInbox context.CancelFunc

func (in cancelInbox) Submit(ctx context.Context, _ core.Signal) error {
	in()
	<-ctx.Done()
	return ctx.Err()
}
