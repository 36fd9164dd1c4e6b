package hitl_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// filesDispatcher is the harness's dispatcher with the Engine's
// core.PromptFiles: each gateway's room, and the files sent (or refused).
type filesDispatcher struct {
	*dispatcher
	room map[string]int // by gateway; core.DefaultPromptRoom when absent

	mu     sync.Mutex
	refuse bool
	files  map[core.Conversation][]core.OutgoingFile
}

func (d *filesDispatcher) PromptRoom(conv core.Conversation) int {
	if r, ok := d.room[conv.Gateway]; ok {
		return r
	}
	return core.DefaultPromptRoom
}

func (d *filesDispatcher) SendPromptFile(_ context.Context, conv core.Conversation, f core.OutgoingFile) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.refuse {
		return errors.New("upload refused")
	}
	if d.files == nil {
		d.files = make(map[core.Conversation][]core.OutgoingFile)
	}
	d.files[conv] = append(d.files[conv], f)
	return nil
}

func (d *filesDispatcher) sent(conv core.Conversation) []core.OutgoingFile {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]core.OutgoingFile(nil), d.files[conv]...)
}

var _ core.PromptFiles = (*filesDispatcher)(nil)

// newFilesHarness is newHarness on a filesDispatcher, with a workspace.
func newFilesHarness(t *testing.T, room map[string]int) (*harness, *filesDispatcher, string) {
	t.Helper()
	ws := t.TempDir()
	h := &harness{
		alpha: &gateway{name: "alpha"}, beta: &gateway{name: "beta"},
		store: hitl.NewMemoryStore(), standing: hitl.NewMemoryStanding(),
		clock: &clock{now: t0}, logs: &testutil.SyncBuffer{},
	}
	h.d = newDispatcher(h.alpha, h.beta)
	fd := &filesDispatcher{dispatcher: h.d, room: room}
	b, err := hitl.NewBroker(fd, hitl.Options{
		TTL: ttl, Approvers: []core.Identity{boss, admin}, Notify: []core.Conversation{convDM},
		AllowSelfApproval: true, Store: h.store, Standing: h.standing, Now: h.clock.Now,
		Log: zerolog.New(h.logs), SweepEvery: time.Hour, Workspace: ws,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.b = b
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = b.Run(ctx) }()
	h.stop = func() { cancel(); <-done }
	t.Cleanup(h.stop)
	<-b.Ready()
	return h, fd, ws
}

// lines200 is a 200-line file; change replaces some of its lines.
func lines200(width int, change map[int]string) string {
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		if s, ok := change[i]; ok {
			b.WriteString(s + "\n")
			continue
		}
		fmt.Fprintf(&b, "line %03d %s\n", i, strings.Repeat("x", width))
	}
	return b.String()
}

func writeCall(path, content string) llm.ToolCall {
	return llm.ToolCall{ID: "w1", Name: "write_file", Args: fmt.Sprintf(`{"path":%q,"content":%q}`, path, content)}
}

// TestWriteFileRequestShowsDiff: a held write_file of a 200-line file
// changing 3 lines shows a diff headed by the path, "+3 −3 lines" and the
// file's SHA-256; it fits a message, so nothing is attached and the
// buttons stay.
func TestWriteFileRequestShowsDiff(t *testing.T) {
	h, fd, ws := newFilesHarness(t, nil)
	old := lines200(10, nil)
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	tok := h.hold(t, writeCall("notes.txt", lines200(10, map[int]string{20: "twenty", 100: "hundred", 180: "eighty"})))
	req := h.lastReply(t, convA)
	mustContain(t, "request", req.Request, "Approval needed: write_file\n", "`notes.txt`: +3 −3 lines (now sha256:",
		"-line 020 xxxxxxxxxx\n+twenty\n", "+hundred", "+eighty", "@@ -17,7 +17,7 @@")
	if strings.Contains(req.Request, "shortened") || strings.Contains(req.Request, `\n`) {
		t.Errorf("request:\n%s", req.Request)
	}
	if req.Approval.NoButtons || len(fd.sent(convA)) != 0 {
		t.Errorf("NoButtons %v, files %d", req.Approval.NoButtons, len(fd.sent(convA)))
	}
	h.say(boss, convB, "/show "+tok)
	mustContain(t, "/show", h.lastReply(t, convB).Text, "change, against the file as it is now: `notes.txt`: +3 −3 lines", "+hundred")
}

// TestWriteFileLongDiffAttached: when the diff does not fit the
// conversation's message, the request shows what fits, says on its first
// line that it was shortened and the whole call attached, and the whole
// diff goes as TOKEN.diff to each conversation; a terminal (room 0) shows
// it whole.
func TestWriteFileLongDiffAttached(t *testing.T) {
	h, fd, ws := newFilesHarness(t, map[string]int{"alpha": 1800, "beta": 0})
	long := strings.Repeat("y", 300)
	old := lines200(300, nil)
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	content := lines200(300, map[int]string{20: "twenty " + long, 100: "hundred " + long, 180: "eighty " + long})
	tok := h.hold(t, writeCall("notes.txt", content))
	req := h.lastReply(t, convA)
	first, _, _ := strings.Cut(req.Request, "\n")
	if first != "Approval needed: write_file (shortened: the whole call is attached, "+tok+".diff)" {
		t.Errorf("first line %q", first)
	}
	mustContain(t, "request", req.Request, "+3 −3 lines", "+twenty", "\n…\n")
	if n := len([]rune(req.Text)); n > 1800 || req.Approval.NoButtons {
		t.Errorf("request of %d runes, NoButtons %v", n, req.Approval.NoButtons)
	}
	files := fd.sent(convA)
	if len(files) != 1 || files[0].Name != tok+".diff" {
		t.Fatalf("files %+v", files)
	}
	diff := string(files[0].Data)
	mustContain(t, "attached diff", diff, "--- a/notes.txt\n+++ b/notes.txt\n", "+twenty "+long, "+hundred "+long, "+eighty "+long)
	// The terminal got all of it, and no file.
	dm := h.lastReply(t, convDM)
	mustContain(t, "terminal request", dm.Request, "+eighty "+long)
	if strings.Contains(dm.Request, "shortened") || len(fd.sent(convDM)) != 0 {
		t.Errorf("terminal request shortened or given a file:\n%s", dm.Request)
	}
}

// TestLongCommandAttachRefused: a 10 KB command whose file cannot be sent
// is held with a request that says so and has no buttons; /show prints
// the whole command, and a typed /approve still runs it.
func TestLongCommandAttachRefused(t *testing.T) {
	h, fd, _ := newFilesHarness(t, nil)
	fd.refuse = true
	cmd := "echo " + strings.Repeat("z", 10<<10) + " END"
	tok := h.hold(t, shellCall(cmd))
	req := h.lastReply(t, convA)
	first, _, _ := strings.Cut(req.Request, "\n")
	mustContain(t, "first line", first, "shortened: the whole call could not be attached; /show "+tok)
	if !req.Approval.NoButtons {
		t.Error("the request keeps its buttons though the whole call was not sent")
	}
	mustContain(t, "hint", req.Approval.Hint, "/approve "+tok, "/show "+tok)
	h.say(boss, convB, "/show "+tok)
	mustContain(t, "/show", h.lastReply(t, convB).Text, strings.Repeat("z", 10<<10)+" END")
	h.say(boss, convB, "/approve "+tok)
	h.idle(t)
	if st := h.status(t, tok); st != record.StatusExecuted {
		t.Errorf("status %s", st)
	}
}

// TestLongCommandAttached: a 10 KB command goes whole as TOKEN.txt, the
// request keeps its buttons.
func TestLongCommandAttached(t *testing.T) {
	h, fd, _ := newFilesHarness(t, nil)
	cmd := "echo " + strings.Repeat("z", 10<<10) + " END"
	tok := h.hold(t, shellCall(cmd))
	req := h.lastReply(t, convA)
	mustContain(t, "request", req.Request, "Approval needed: shell (shortened: the whole call is attached, "+tok+".txt)")
	files := fd.sent(convA)
	if len(files) != 1 || files[0].Name != tok+".txt" || req.Approval.NoButtons {
		t.Fatalf("files %v, NoButtons %v", len(files), req.Approval.NoButtons)
	}
	mustContain(t, "file", string(files[0].Data), "command:\n"+cmd+"\n")
}

// TestWriteFileChangedSinceDiffRefused: the diff shown is bound: once the
// file changed, the approved write is refused and does not run.
func TestWriteFileChangedSinceDiffRefused(t *testing.T) {
	h, _, ws := newFilesHarness(t, nil)
	path := filepath.Join(ws, "notes.txt")
	if err := os.WriteFile(path, []byte("one\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok := h.hold(t, writeCall("notes.txt", "one\nTWO\n"))
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.say(boss, convB, "/approve "+tok)
	h.idle(t)
	if st := h.status(t, tok); st != record.StatusFailed || h.d.runs.Load() != 0 {
		t.Fatalf("status %s, runs %d", st, h.d.runs.Load())
	}
	mustContain(t, "notice", h.lastReply(t, convB).Text, "its file changed since the request showed the diff")
}

// TestNewFileRequest: a file that does not exist yet is "new file, N
// lines", its content shown.
func TestNewFileRequest(t *testing.T) {
	h, _, _ := newFilesHarness(t, nil)
	h.hold(t, writeCall("dir/new.txt", "a\nb\nc\n"))
	mustContain(t, "request", h.lastReply(t, convA).Request, "`dir/new.txt`: new file, 3 lines\n```\na\nb\nc\n```")
}

// TestLongMCPArgumentsAttached: an MCP tool's long arguments are shortened
// in the request and go whole as TOKEN.txt.
func TestLongMCPArgumentsAttached(t *testing.T) {
	h, fd, _ := newFilesHarness(t, nil)
	body := strings.Repeat("q", 3000) + "TAIL"
	tok := h.hold(t, llm.ToolCall{ID: "m1", Name: "mcp__files__put", Args: fmt.Sprintf(`{"body":%q}`, body)})
	mustContain(t, "request", h.lastReply(t, convA).Request, "(shortened: the whole call is attached, "+tok+".txt)")
	files := fd.sent(convA)
	if len(files) != 1 || !strings.Contains(string(files[0].Data), body) {
		t.Fatalf("files %d", len(files))
	}
}
