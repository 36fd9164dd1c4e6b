package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways/console"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// A file send_file sends to the console is one line naming its path,
// size and media type, with the caption; control characters in them are
// shown escaped.
func TestSendFileIsALine(t *testing.T) {
	out := &testutil.SyncBuffer{}
	c := console.New(strings.NewReader(""), out, false)
	err := c.SendFile(context.Background(), console.Conversation(), core.OutgoingFile{
		Name: "r.txt", Path: "out/r.txt", MediaType: "text/plain; charset=utf-8", Data: []byte("hello"), Caption: "done\x1b[2J"})
	if err != nil {
		t.Fatal(err)
	}
	want := "gatehouse › [file] out/r.txt (5 bytes, text/plain; charset=utf-8) in the workspace: done\\x1b[2J\n"
	if got := out.String(); got != want {
		t.Fatalf("printed %q, want %q", got, want)
	}
}
