package app_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/app/storetable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/auditfmt"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// TestConsoleUndo: through the wired bot (console, engine, tool registry,
// hitl broker, SQLite store) with the fake model, a rule-allowed
// write_file and an approved shell command that edits, deletes and
// creates files are taken back by /undo, one call at a time, to the exact
// earlier bytes; /checkpoints lists them; the model is told through its
// history; /help lists both commands.
func TestConsoleUndo(t *testing.T) {
	fake := fakeoai.Start(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(ws, name))
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(b)
	}
	write("notes.txt", "original\n")
	write("old.txt", "to be deleted\n")
	yaml := fmt.Sprintf("llm: {providers: [{name: fake, base_url: %q, model: fake-model}]}\n"+
		"policy: {rules: [{tool: write_file, decision: allow}, {tool: shell, decision: approve}]}\n"+
		"tools: {workspace: %q, sandbox: \"off\"}\nstore: {dsn: %q}\nhttp: {listen: \"\"}\n",
		fake.URL(), ws, filepath.Join(dir, "gatehouse.db"))
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	if err != nil {
		t.Fatal(err)
	}
	stdin, typed := io.Pipe()
	out := &testutil.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.New(ctx, app.Options{Config: cfg, Stdin: stdin, Stdout: out, Log: zerolog.Nop(), Secrets: secrets.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	say := func(line string) {
		t.Helper()
		if _, err := io.WriteString(typed, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	waitOut := func(what string) {
		t.Helper()
		testutil.WaitFor(t, what, func() bool { return strings.Contains(out.String(), what) })
	}

	fake.Push(fakeoai.ToolCalls(fakeoai.Call{ID: "c1", Name: "write_file", Args: `{"path":"notes.txt","content":"rewritten"}`}),
		fakeoai.Text("wrote notes.txt"))
	say("rewrite the notes")
	waitOut("wrote notes.txt")
	if got := read("notes.txt"); got != "rewritten" {
		t.Fatalf("notes.txt = %q after write_file", got)
	}

	fake.Push(fakeoai.ToolCalls(fakeoai.Call{ID: "c2", Name: "shell",
		Args: `{"command":"printf 'edited\\n' >> notes.txt && rm old.txt && mkdir -p made && printf new > made/created.txt"}`}),
		fakeoai.Text("waiting for approval"))
	say("now edit with the shell")
	waitOut("waiting for approval")
	token := regexp.MustCompile(`/approve ([A-Z0-9]{8})`).FindStringSubmatch(out.String())
	if token == nil {
		t.Fatalf("no approval request:\n%s", out.String())
	}
	fake.Push(fakeoai.Text("the shell command ran"))
	say("/approve " + token[1])
	waitOut("the shell command ran")
	if read("notes.txt") != "rewrittenedited\n" || read("made/created.txt") != "new" || !strings.HasPrefix(read("old.txt"), "<") {
		t.Fatalf("after shell: notes %q, created %q, old %q", read("notes.txt"), read("made/created.txt"), read("old.txt"))
	}

	say("/help")
	waitOut("/undo [N] — restore the workspace")
	waitOut("/checkpoints — ")

	say("/checkpoints")
	waitOut("[approved]")

	say("/undo")
	waitOut("Restored the workspace to before shell")
	if read("notes.txt") != "rewritten" || read("old.txt") != "to be deleted\n" || !strings.HasPrefix(read("made/created.txt"), "<") {
		t.Fatalf("after /undo: notes %q, old %q, created %q", read("notes.txt"), read("old.txt"), read("made/created.txt"))
	}
	if _, err := os.Stat(filepath.Join(ws, "made")); !os.IsNotExist(err) {
		t.Fatalf("the created directory is still there: %v", err)
	}
	waitOut("made (removed)")

	say("/undo")
	waitOut("Restored the workspace to before write_file")
	if got := read("notes.txt"); got != "original\n" {
		t.Fatalf("after the second /undo notes.txt = %q", got)
	}
	say("/undo")
	waitOut("Nothing to undo")

	fake.Push(fakeoai.Text("understood"))
	say("what happened to my files?")
	waitOut("understood")
	reqs := fake.Requests()
	last := reqs[len(reqs)-1]
	var notes int
	for _, m := range last.Messages {
		if strings.Contains(m.Content, "[gatehouse] workspace restored to before") {
			notes++
		}
	}
	if notes != 2 {
		t.Errorf("the model saw %d restore notes, want 2: %+v", notes, last.Messages)
	}
	for _, tool := range last.Tools {
		if strings.Contains(tool.Name, "undo") || strings.Contains(tool.Name, "checkpoint") {
			t.Errorf("the model is offered %s", tool.Name)
		}
	}
	typed.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	a.Close()

	// `bot audit` reads the store read-only, as here, and shows the rows.
	st, err := storetable.OpenReadOnly(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entries, err := st.QueryAudit(context.Background(), record.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	if err := auditfmt.WriteAudit(&table, entries, false); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(table.String(), "/undo"); got != 2 || !strings.Contains(table.String(), "undone") {
		t.Errorf("the audit shows %d /undo rows, want 2 undone:\n%s", got, table.String())
	}
}

// chatGateway poses as telegram (without its API): it hands over its inbox
// and records every reply.
type chatGateway struct {
	inbox chan gateways.Inbox
	mu    sync.Mutex
	texts []string
}

func (g *chatGateway) Name() string { return "telegram" }

func (g *chatGateway) Run(ctx context.Context, inbox gateways.Inbox) error {
	g.inbox <- inbox
	<-ctx.Done()
	return nil
}

func (g *chatGateway) Act(_ context.Context, a core.Action) (core.Result, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.texts = append(g.texts, a.Text)
	return core.Result{}, nil
}

func (g *chatGateway) said() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return strings.Join(g.texts, "\n---\n")
}

// TestUndoOfApprovedCallNeedsApprover: a shell command a telegram user
// asked for and the console's approver approved may not be undone by that
// user (refused, the workspace untouched); an approver in the same chat
// undoes it.
func TestUndoOfApprovedCallNeedsApprover(t *testing.T) {
	fake := fakeoai.Start(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	yaml := fmt.Sprintf("llm: {providers: [{name: fake, base_url: %q, model: fake-model}]}\n"+
		"gateways: {telegram: {allow: [\"*\"]}}\nhitl: {approvers: [console:local, telegram:1]}\n"+
		"tools: {workspace: %q, sandbox: \"off\"}\nstore: {dsn: %q}\nhttp: {listen: \"\"}\n",
		fake.URL(), ws, filepath.Join(dir, "gatehouse.db"))
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	if err != nil {
		t.Fatal(err)
	}
	stdin, typed := io.Pipe()
	defer typed.Close()
	tg := &chatGateway{inbox: make(chan gateways.Inbox, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Options{Config: cfg, Stdin: stdin, Stdout: &testutil.SyncBuffer{}, Log: zerolog.Nop(),
		Secrets: secrets.New(), Gateways: []gateways.Gateway{tg}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		cancel()
		<-done
		a.Close()
	}()
	inbox := <-tg.inbox
	chat := core.Conversation{Gateway: "telegram", Chat: "100"}
	from := func(id core.Identity, text string) {
		t.Helper()
		if err := inbox.Submit(context.Background(), core.Signal{Kind: core.KindMessage, Conv: chat, From: id, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	fake.Push(fakeoai.ToolCalls(fakeoai.Call{ID: "c1", Name: "shell", Args: `{"command":"printf made > made.txt"}`}),
		fakeoai.Text("asked for approval"))
	from("telegram:7", "make a file")
	var token []string
	testutil.WaitFor(t, "the approval request in the chat", func() bool {
		token = regexp.MustCompile(`/approve ([A-Z0-9]{8})`).FindStringSubmatch(tg.said())
		return token != nil
	})
	fake.Push(fakeoai.Text("made it"))
	if _, err := io.WriteString(typed, "/approve "+token[1]+"\n"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the outcome turn", func() bool { return strings.Contains(tg.said(), "made it") })
	made := filepath.Join(ws, "made.txt")
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
	from("telegram:7", "/undo")
	testutil.WaitFor(t, "the refusal", func() bool { return strings.Contains(tg.said(), "Not authorised (your identity is telegram:7)") })
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("a refused /undo changed the workspace: %v", err)
	}
	from("telegram:1", "/undo")
	testutil.WaitFor(t, "the approver's /undo", func() bool { return strings.Contains(tg.said(), "Restored the workspace to before shell") })
	if _, err := os.Stat(made); !os.IsNotExist(err) {
		t.Fatalf("made.txt is still there after the approver's /undo: %v", err)
	}
}
