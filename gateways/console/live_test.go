package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways/console"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestLiveReplyPrintsAsItComes: each update appends only what is new, with
// control characters escaped; Finish prints the rest and ends the line;
// the output is the line Act would have printed for the final text.
func TestLiveReplyPrintsAsItComes(t *testing.T) {
	out := &testutil.SyncBuffer{}
	c := console.New(strings.NewReader(""), out, false)
	live, ok := c.StartLive(context.Background(), console.Conversation(), "")
	if !ok {
		t.Fatal("the console cannot show a reply live")
	}
	live.Update("Hello ")
	if got := out.String(); got != "gatehouse › Hello " {
		t.Fatalf("after the first update: %q", got)
	}
	live.Update("Hello \x1b[31mred ")
	if got := out.String(); got != `gatehouse › Hello \x1b[31mred ` {
		t.Fatalf("after the second update: %q", got)
	}
	if err := live.Finish(context.Background(), "Hello \x1b[31mred world.\n"); err != nil {
		t.Fatal(err)
	}
	want := &testutil.SyncBuffer{}
	ref := console.New(strings.NewReader(""), want, false)
	if _, err := ref.Act(context.Background(), replyAction("Hello \x1b[31mred world.\n")); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Fatalf("live output %q; Act prints %q", out.String(), want.String())
	}
	live.Update("more ") // after Finish: ignored
	if out.String() != want.String() {
		t.Fatalf("an update after Finish printed: %q", out.String())
	}
}

// TestLiveReplyAbandoned: a reply withdrawn after it printed ends its line
// and prints the note; one that printed nothing prints nothing.
func TestLiveReplyAbandoned(t *testing.T) {
	out := &testutil.SyncBuffer{}
	c := console.New(strings.NewReader(""), out, false)
	live, _ := c.StartLive(context.Background(), console.Conversation(), "")
	live.Abandon(context.Background(), "(reply withdrawn)")
	if out.String() != "" {
		t.Fatalf("an abandoned reply that showed nothing printed %q", out.String())
	}
	live, _ = c.StartLive(context.Background(), console.Conversation(), "")
	live.Update("Half a ")
	live.Abandon(context.Background(), "(reply withdrawn)")
	if got, want := out.String(), "gatehouse › Half a \ngatehouse › (reply withdrawn)\n"; got != want {
		t.Fatalf("output %q; want %q", got, want)
	}
}

func replyAction(text string) core.Action {
	return core.Action{Kind: core.ActionReply, Conv: console.Conversation(), Text: text}
}

// TestLiveReplyEndingWithANewline: a partial that ends with a newline (the
// model's last line, written before its answer ends) prints no blank line
// Act would not print.
func TestLiveReplyEndingWithANewline(t *testing.T) {
	out := &testutil.SyncBuffer{}
	c := console.New(strings.NewReader(""), out, false)
	live, _ := c.StartLive(context.Background(), console.Conversation(), "")
	live.Update("First line.\n")
	live.Update("First line.\nSecond line.\n\n")
	if err := live.Finish(context.Background(), "First line.\nSecond line.\n\n"); err != nil {
		t.Fatal(err)
	}
	want := &testutil.SyncBuffer{}
	ref := console.New(strings.NewReader(""), want, false)
	if _, err := ref.Act(context.Background(), replyAction("First line.\nSecond line.\n\n")); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Fatalf("live output %q; Act prints %q", out.String(), want.String())
	}
}
