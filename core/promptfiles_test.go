package core_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
)

// filer is a gateway with buttons that sends files and says its room.
type filer struct {
	buttons
	room   int
	max    int64
	refuse bool

	fmu   sync.Mutex
	files []core.OutgoingFile
}

func (f *filer) SendFile(_ context.Context, _ core.Conversation, file core.OutgoingFile) error {
	if f.refuse {
		return errors.New("413 Request Entity Too Large")
	}
	f.fmu.Lock()
	defer f.fmu.Unlock()
	f.files = append(f.files, file)
	return nil
}

func (f *filer) MaxFileBytes() int64 { return f.max }
func (f *filer) PromptRoom() int     { return f.room }

var (
	_ core.FileSender  = (*filer)(nil)
	_ core.PromptSizer = (*filer)(nil)
)

// TestPromptFiles: the Engine tells the broker each gateway's room (its
// own, or DefaultPromptRoom), sends a request's file through the
// gateway's FileSender redacted like the request, and refuses one the
// gateway cannot take; a request with NoButtons goes as plain text even
// to a gateway with buttons.
func TestPromptFiles(t *testing.T) {
	gw := &filer{room: 3500, max: 64}
	redact := func(s string) string { return strings.ReplaceAll(s, "sk-SECRET", "[redacted]") }
	eng := buildEngine(t, core.Config{Provider: instantText("x"), Redact: redact}, "gw", gw)
	if err := eng.Register("plain", &plain{}); err != nil {
		t.Fatal(err)
	}
	if got := eng.PromptRoom(promptConv); got != 3500 {
		t.Errorf("room %d, want the gateway's 3500", got)
	}
	if got := eng.PromptRoom(core.Conversation{Gateway: "plain", Chat: "1"}); got != core.DefaultPromptRoom {
		t.Errorf("room of a gateway that does not say: %d", got)
	}
	ctx := context.Background()
	if err := eng.SendPromptFile(ctx, promptConv, core.OutgoingFile{Name: "K7Q2MX9P.txt", Data: []byte("curl sk-SECRET"), Caption: "sk-SECRET"}); err != nil {
		t.Fatal(err)
	}
	if len(gw.files) != 1 || string(gw.files[0].Data) != "curl [redacted]" || gw.files[0].Caption != "[redacted]" {
		t.Errorf("files %+v", gw.files)
	}
	if err := eng.SendPromptFile(ctx, promptConv, core.OutgoingFile{Name: "big.txt", Data: make([]byte, 65)}); err == nil {
		t.Error("a file over MaxFileBytes was sent")
	}
	if err := eng.SendPromptFile(ctx, core.Conversation{Gateway: "plain", Chat: "1"}, core.OutgoingFile{Name: "x.txt"}); err == nil {
		t.Error("a gateway without files took one")
	}
	gw.refuse = true
	if err := eng.SendPromptFile(ctx, promptConv, core.OutgoingFile{Name: "x.txt"}); err == nil || !strings.Contains(err.Error(), "413") {
		t.Errorf("refused upload: %v", err)
	}
	p := prompt
	p.NoButtons = true
	if err := eng.Prompt(ctx, promptConv, "Approval needed: shell", p); err != nil {
		t.Fatal(err)
	}
	if len(gw.prompts) != 0 || len(gw.replies) != 1 || gw.replies[0].Text != "Approval needed: shell\n"+p.Hint {
		t.Errorf("a NoButtons request: prompts %q, replies %+v", gw.prompts, gw.replies)
	}
}
