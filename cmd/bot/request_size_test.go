package main

import (
	"encoding/json"
	"slices"
	"testing"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// maxHiRequest is the most bytes the model's request for a one-word turn
// may take with the built-in tools (issue 34): every byte of the system
// prompt and of the tools' descriptions goes out with every request.
const maxHiRequest = 1600

// TestHiRequestIsSmall: the request for "hi" in a new conversation offers
// every built-in tool and the system prompt in at most maxHiRequest bytes.
func TestHiRequestIsSmall(t *testing.T) {
	t.Parallel()
	llm := startFake(t, func(fakeopenai.Request) fakeopenai.Step { return fakeopenai.Text("MODEL: hello.") })
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fakeConfig(llm.URL(), "sk-test", shellApprove, "info"))
	p := startBot(t, dir, baseEnv(dir))
	p.send("hi")
	expectLine(t, p, "MODEL: hello.")
	var hi *fakeopenai.Request
	for _, r := range llm.Requests() {
		if r.LastUser() == "hi" {
			hi = &r
			break
		}
	}
	if hi == nil {
		t.Fatalf("no request for hi among %d", len(llm.Requests()))
	}
	var names []string
	for _, tl := range hi.Tools {
		names = append(names, tl.Name)
	}
	want := []string{"current_time", "http_get", "list_dir", "read_file", "send_file", "shell", "write_file"}
	for _, n := range want {
		if !slices.Contains(names, n) {
			t.Errorf("tool %s not offered (offered: %v)", n, names)
		}
	}
	if len(hi.Messages) != 2 || hi.Messages[0].Role != "system" || hi.Messages[0].Content == "" {
		t.Errorf("messages %+v; want the system prompt and hi", hi.Messages)
	}
	if hi.BodySize > maxHiRequest {
		body, _ := json.MarshalIndent(json.RawMessage(hi.Body), "", " ")
		t.Errorf("the request for hi is %d bytes; want at most %d:\n%s", hi.BodySize, maxHiRequest, body)
	}
}
