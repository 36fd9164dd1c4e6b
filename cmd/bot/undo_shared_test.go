package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestUndoFromAnotherInstanceThroughTheBinary: two `bot run`s on one
// PostgreSQL database, each on its own host as far as files go (its own
// directory; the workspace a link to one shared directory, as a share
// every host mounts): a write_file through instance A is taken back by an
// /undo typed to instance B, with the bytes A's checkpoint recorded. With
// the blobs in a directory beside each workspace, B had none of them.
func TestUndoFromAnotherInstanceThroughTheBinary(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ai := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		last := lastMessage(r)
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "rewrite the notes"):
			return fakeopenai.ToolCalls(fakeopenai.Call{Name: "write_file", Args: `{"path":"notes.txt","content":"rewritten by A\n"}`})
		case last.Role == "tool":
			return fakeopenai.Text("MODEL: rewritten.")
		}
		return fakeopenai.Text("MODEL: ok.")
	})
	shared := t.TempDir()
	notes := filepath.Join(shared, "notes.txt")
	original := "the original notes\x00\xff\n"
	if err := os.WriteFile(notes, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	procs := map[string]*botProc{}
	for _, name := range []string{"a", "b"} {
		dir := t.TempDir()
		if err := os.Symlink(shared, filepath.Join(dir, "workspace")); err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, "config.yaml", fmt.Sprintf(`llm:
  providers:
    - {name: fake, base_url: %s, api_key: "sk-fake-key-0000000000", model: fake-model}
gateways:
  console: {enabled: true}
hitl: {approvers: [console:local]}
policy:
  rules:
    - {tool: "*", decision: allow}
tools: {workspace: ./workspace}
store: {driver: postgres, dsn: ${GATEHOUSE_DSN}, instance: %s}
http: {listen: ""}
log: {level: info, format: json}
`, ai.URL(), name))
		procs[name] = startBot(t, dir, baseEnv(dir, "GATEHOUSE_DSN="+dsn))
	}
	procs["a"].send("rewrite the notes")
	expectLine(t, procs["a"], "MODEL: rewritten.")
	if b, err := os.ReadFile(notes); err != nil || string(b) != "rewritten by A\n" {
		t.Fatalf("notes.txt after A's call: %q, %v", b, err)
	}
	procs["b"].send("/undo")
	expectLine(t, procs["b"], "Restored the workspace to before write_file")
	if b, err := os.ReadFile(notes); err != nil || string(b) != original {
		t.Fatalf("notes.txt after /undo through B: %q, %v; want %q", b, err, original)
	}
}

// TestUndoRefusedWhileAnotherInstanceRunsAChange: two `bot run`s on one
// PostgreSQL database and one workspace. While a shell call that changes
// the workspace runs on instance A, /undo typed to instance B is refused,
// naming A, and changes nothing (before, B restored the workspace under
// A's running call); once the call has ended, B's /undo takes it back.
func TestUndoRefusedWhileAnotherInstanceRunsAChange(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ai := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		last := lastMessage(r)
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "change the notes"):
			return fakeopenai.ToolCalls(fakeopenai.Call{Name: "shell",
				Args: `{"command":"touch started; while [ ! -e go ]; do sleep 0.05; done; echo changed by A > notes.txt"}`})
		case last.Role == "tool":
			return fakeopenai.Text("MODEL: changed.")
		}
		return fakeopenai.Text("MODEL: ok.")
	})
	shared := t.TempDir()
	notes := filepath.Join(shared, "notes.txt")
	if err := os.WriteFile(notes, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	procs := map[string]*botProc{}
	for _, name := range []string{"a", "b"} {
		dir := t.TempDir()
		if err := os.Symlink(shared, filepath.Join(dir, "workspace")); err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, "config.yaml", fmt.Sprintf(`llm:
  providers:
    - {name: fake, base_url: %s, api_key: "sk-fake-key-0000000000", model: fake-model}
gateways:
  console: {enabled: true}
hitl: {approvers: [console:local]}
policy:
  rules:
    - {tool: "*", decision: allow}
tools: {workspace: ./workspace, sandbox: "off"}
store: {driver: postgres, dsn: ${GATEHOUSE_DSN}, instance: %s}
http: {listen: ""}
log: {level: info, format: json}
`, ai.URL(), name))
		procs[name] = startBot(t, dir, baseEnv(dir, "GATEHOUSE_DSN="+dsn))
	}
	procs["a"].send("change the notes")
	testutil.WaitFor(t, "A's shell call running", func() bool {
		_, err := os.Stat(filepath.Join(shared, "started"))
		return err == nil
	})
	procs["b"].send("/undo")
	expectLine(t, procs["b"], "is running on instance a")
	if err := os.WriteFile(filepath.Join(shared, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	expectLine(t, procs["a"], "MODEL: changed.")
	if b, err := os.ReadFile(notes); err != nil || string(b) != "changed by A\n" {
		t.Fatalf("notes.txt after A's call: %q, %v", b, err)
	}
	procs["b"].send("/undo")
	expectLine(t, procs["b"], "Restored the workspace to before shell")
	if b, err := os.ReadFile(notes); err != nil || string(b) != "original\n" {
		t.Fatalf("notes.txt after /undo through B: %q, %v", b, err)
	}
}
