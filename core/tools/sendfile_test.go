package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// recordingSender is a core.FileSender that keeps what it was given.
type recordingSender struct {
	max  int64
	mu   sync.Mutex
	sent []sentFile
}

type sentFile struct {
	conv core.Conversation
	file core.OutgoingFile
}

func (s *recordingSender) SendFile(_ context.Context, conv core.Conversation, f core.OutgoingFile) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, sentFile{conv: conv, file: f})
	return nil
}

func (s *recordingSender) MaxFileBytes() int64 { return s.max }

func (s *recordingSender) files() []sentFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sentFile(nil), s.sent...)
}

// sendFileRig is a registry with send_file over a test workspace whose
// "chat" gateway records what it is sent.
type sendFileRig struct {
	reg    *Registry
	ws     *Workspace
	sender *recordingSender
}

const rigSecret = "sk-test-0123456789abcdefghijkl"

func newSendFileRig(t *testing.T, max int64) sendFileRig {
	t.Helper()
	ws, _ := testWorkspace(t)
	sender := &recordingSender{max: max}
	acts := &core.Actuators{}
	if err := acts.Register("chat", struct {
		core.ActuatorFunc
		*recordingSender
	}{nil, sender}); err != nil {
		t.Fatal(err)
	}
	if err := acts.Register("plain", core.ActuatorFunc(nil)); err != nil {
		t.Fatal(err)
	}
	sec := secrets.New(rigSecret)
	reg := NewRegistry(Options{Secrets: sec})
	if err := reg.Register(NewSendFile(ws, acts, sec)); err != nil {
		t.Fatal(err)
	}
	return sendFileRig{reg: reg, ws: ws, sender: sender}
}

var rigConv = core.Conversation{Gateway: "chat", Chat: "C1", Thread: "T9"}

func (r sendFileRig) act(t *testing.T, conv core.Conversation, args any) core.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.reg.Act(context.Background(), core.Action{Kind: core.ActionTool, Conv: conv,
		Call: llm.ToolCall{Name: "send_file", Args: string(raw)}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (r sendFileRig) write(t *testing.T, name string, data []byte) {
	t.Helper()
	p := filepath.Join(r.ws.Dir(), name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSendFileSendsTheBytesToTheTurnsConversation(t *testing.T) {
	r := newSendFileRig(t, 1<<20)
	data := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0, 1, 2, 0xff}, 1000)...)
	r.write(t, "out/chart.png", data)
	res := r.act(t, rigConv, map[string]string{"path": "out/chart.png", "caption": "the chart"})
	if res.Failed {
		t.Fatalf("send_file failed: %s", res.Output)
	}
	got := r.sender.files()
	if len(got) != 1 {
		t.Fatalf("sent %d files, want 1", len(got))
	}
	f := got[0]
	if f.conv != rigConv || f.file.Name != "chart.png" || f.file.MediaType != "image/png" ||
		f.file.Caption != "the chart" || !bytes.Equal(f.file.Data, data) {
		t.Fatalf("sent %+v to %v (%d bytes)", f.file.Name, f.conv, len(f.file.Data))
	}
	if !strings.Contains(res.Output, "sent out/chart.png") {
		t.Errorf("output %q does not say what was sent", res.Output)
	}
}

func TestSendFileRefuses(t *testing.T) {
	r := newSendFileRig(t, 100)
	r.write(t, "big.bin", bytes.Repeat([]byte("x"), 101))
	r.write(t, "ok.txt", []byte("fine"))
	r.write(t, "empty.txt", nil)
	r.write(t, "env.txt", []byte("OPENAI_API_KEY="+rigSecret+"\n"))
	r.write(t, "b64.txt", []byte("blob: "+base64.StdEncoding.EncodeToString([]byte("xx"+rigSecret+"yy"))))
	if err := syscall.Mkfifo(filepath.Join(r.ws.Dir(), "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		conv core.Conversation
		args map[string]string
		want string
	}{
		{"outside", rigConv, map[string]string{"path": "../../outside/secret.txt"}, "outside the workspace"},
		{"absolute", rigConv, map[string]string{"path": "/etc/passwd"}, "outside the workspace"},
		{"symlink out", rigConv, map[string]string{"path": "link.txt"}, "outside the workspace"},
		{"through a linked dir", rigConv, map[string]string{"path": "linkdir/secret.txt"}, "outside the workspace"},
		{"fifo", rigConv, map[string]string{"path": "pipe"}, "not a regular file"},
		{"directory", rigConv, map[string]string{"path": "."}, "not a regular file"},
		{"missing", rigConv, map[string]string{"path": "nope.txt"}, "no such file"},
		{"over the limit", rigConv, map[string]string{"path": "big.bin"}, `"big.bin" is 101 bytes; chat takes files of at most 100 bytes`},
		{"empty", rigConv, map[string]string{"path": "empty.txt"}, "empty"},
		{"secret", rigConv, map[string]string{"path": "env.txt"}, "holds one of the bot's secrets"},
		{"secret in base64", rigConv, map[string]string{"path": "b64.txt"}, "holds one of the bot's secrets"},
		{"key-shaped caption", rigConv, map[string]string{"path": "ok.txt", "caption": "key ghp_abcdefghijklmnopqrstuvwxyz0123456789"}, "caption contains a secret"},
		{"long caption", rigConv, map[string]string{"path": "ok.txt", "caption": strings.Repeat("é", MaxCaption+1)}, "at most 1024"},
		{"a gateway without files", core.Conversation{Gateway: "plain", Chat: "1"}, map[string]string{"path": "ok.txt"}, "plain gateway cannot send files"},
		{"no such gateway", core.Conversation{Gateway: "gone", Chat: "1"}, map[string]string{"path": "ok.txt"}, "gone gateway cannot send files"},
		{"unknown argument", rigConv, map[string]string{"path": "ok.txt", "chat": "other"}, "invalid arguments"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := r.act(t, c.conv, c.args)
			if !res.Failed || !strings.Contains(res.Output, c.want) {
				t.Fatalf("got failed=%v %q, want a failure saying %q", res.Failed, res.Output, c.want)
			}
			if strings.Contains(res.Output, rigSecret) || strings.Contains(res.Output, r.ws.Dir()) {
				t.Fatalf("output %q shows the secret or the workspace's directory", res.Output)
			}
		})
	}
	if n := len(r.sender.files()); n != 0 {
		t.Fatalf("%d files sent; every call should have been refused", n)
	}
}

func TestSendFileWithoutAConversationSendsNothing(t *testing.T) {
	r := newSendFileRig(t, 100)
	r.write(t, "ok.txt", []byte("fine"))
	_, err := r.reg.Run(context.Background(), "send_file", json.RawMessage(`{"path":"ok.txt"}`))
	if err == nil || !strings.Contains(err.Error(), "no conversation") {
		t.Fatalf("err = %v, want a refusal naming the missing conversation", err)
	}
}

func TestOutName(t *testing.T) {
	for in, want := range map[string]string{
		"dir/report.pdf":                  "report.pdf",
		"a\nb\u202e.txt":                  "a_b_.txt",
		"\xff.bin":                        "_.bin",
		strings.Repeat("n", 300) + ".csv": strings.Repeat("n", maxOutName-4) + ".csv",
	} {
		if got := outName(in); got != want {
			t.Errorf("outName(%q) = %q, want %q", in, got, want)
		}
	}
}
