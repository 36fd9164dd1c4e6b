package main

import (
	"strings"
	"testing"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// TestConsoleSendFile: the real binary runs the model's send_file on the
// console: a workspace file is shown as one line (its path, size and
// media type, and the caption), and a file holding the bot's API key is
// refused, the model told why, and never shown.
func TestConsoleSendFile(t *testing.T) {
	t.Parallel()
	const apiKey = "sk-sendfile-test-key-0123456789abcdef"
	srv := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "tool":
			return fakeopenai.Text("TOOL SAID: " + last.Content)
		case strings.Contains(last.Content, "the report"):
			return fakeopenai.ToolCalls(fakeopenai.Call{ID: "c1", Name: "send_file", Args: `{"path":"out/report.txt","caption":"your report"}`})
		default:
			return fakeopenai.ToolCalls(fakeopenai.Call{ID: "c2", Name: "send_file", Args: `{"path":"keys.txt"}`})
		}
	})
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fakeConfig(srv.URL(), apiKey, shellApprove, "warn"))
	writeFile(t, dir, "workspace/out/report.txt", "twelve bytes")
	writeFile(t, dir, "workspace/keys.txt", "key="+apiKey)
	p := startBot(t, dir, baseEnv(dir))
	p.send("send me the report")
	expectLine(t, p, "[file] out/report.txt (12 bytes, text/plain; charset=utf-8) in the workspace: your report")
	expectLine(t, p, "TOOL SAID: sent out/report.txt")
	p.send("send me keys.txt")
	expectLine(t, p, "TOOL SAID: error: send_file: \"keys.txt\" holds one of the bot's secrets")
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if out := p.stdout(); strings.Contains(out, apiKey) || strings.Contains(out, "[file] keys.txt") {
		t.Fatalf("stdout shows the refused file or the key:\n%s", out)
	}
}
