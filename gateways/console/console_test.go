package console_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

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
