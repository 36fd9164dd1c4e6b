package llm_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

func specs(names ...string) []llm.ToolSpec {
	out := make([]llm.ToolSpec, len(names))
	for i, n := range names {
		out[i] = llm.ToolSpec{Name: n, Parameters: []byte(`{"type":"object"}`)}
	}
	return out
}

var allTools = specs("shell", "current_time", "read_file", "list_dir", "write_file", "http_get")

func demoAsk(t *testing.T, tools []llm.ToolSpec, msgs ...llm.Message) llm.Response {
	t.Helper()
	resp, err := llm.NewDemo().Complete(context.Background(), llm.Request{Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	if resp.Provider != "demo" || resp.Message.Role != llm.RoleAssistant {
		t.Errorf("provider %q role %q", resp.Provider, resp.Message.Role)
	}
	if resp.Usage != (llm.Usage{}) {
		t.Errorf("usage = %+v; the demo spends no tokens and reports none (a budget would count them)", resp.Usage)
	}
	return resp
}

func user(s string) llm.Message { return llm.Message{Role: llm.RoleUser, Content: s} }

func TestDemoIntents(t *testing.T) {
	tests := []struct {
		say   string
		calls []llm.ToolCall
	}{
		{"run `ls -la`", []llm.ToolCall{{ID: "demo_1", Name: "shell", Args: `{"command":"ls -la"}`}}},
		{"run ls", []llm.ToolCall{{ID: "demo_1", Name: "shell", Args: `{"command":"ls"}`}}},
		{"shell: uname -a", []llm.ToolCall{{ID: "demo_1", Name: "shell", Args: `{"command":"uname -a"}`}}},
		{"Please execute echo \"hi there\"", []llm.ToolCall{{ID: "demo_1", Name: "shell", Args: `{"command":"echo \"hi there\""}`}}},
		{"What time is it?", []llm.ToolCall{{ID: "demo_1", Name: "current_time", Args: `{}`}}},
		{"time", []llm.ToolCall{{ID: "demo_1", Name: "current_time", Args: `{}`}}},
		{"date", []llm.ToolCall{{ID: "demo_1", Name: "current_time", Args: `{}`}}},
		{"what's the date", []llm.ToolCall{{ID: "demo_1", Name: "current_time", Args: `{}`}}},
		{"WHAT'S THE TIME?", []llm.ToolCall{{ID: "demo_1", Name: "current_time", Args: `{}`}}},
		{"What’s the date?", []llm.ToolCall{{ID: "demo_1", Name: "current_time", Args: `{}`}}},
		{"whats the time", []llm.ToolCall{{ID: "demo_1", Name: "current_time", Args: `{}`}}},
		{"run `echo what's up`", []llm.ToolCall{{ID: "demo_1", Name: "shell", Args: `{"command":"echo what's up"}`}}},
		{"write whatsapp to notes.txt", []llm.ToolCall{{ID: "demo_1", Name: "write_file", Args: `{"path":"notes.txt","content":"whatsapp"}`}}},
		{"read notes.txt", []llm.ToolCall{{ID: "demo_1", Name: "read_file", Args: `{"path":"notes.txt"}`}}},
		{"cat notes.txt", []llm.ToolCall{{ID: "demo_1", Name: "read_file", Args: `{"path":"notes.txt"}`}}},
		{"show me file README", []llm.ToolCall{{ID: "demo_1", Name: "read_file", Args: `{"path":"README"}`}}},
		{"can you show me docs/a.md", []llm.ToolCall{{ID: "demo_1", Name: "read_file", Args: `{"path":"docs/a.md"}`}}},
		{"list files", []llm.ToolCall{{ID: "demo_1", Name: "list_dir", Args: `{"path":"."}`}}},
		{"ls .", []llm.ToolCall{{ID: "demo_1", Name: "list_dir", Args: `{"path":"."}`}}},
		{"list files in docs", []llm.ToolCall{{ID: "demo_1", Name: "list_dir", Args: `{"path":"docs"}`}}},
		{"What's in the workspace?", []llm.ToolCall{{ID: "demo_1", Name: "list_dir", Args: `{"path":"."}`}}},
		{"what’s in my workspace", []llm.ToolCall{{ID: "demo_1", Name: "list_dir", Args: `{"path":"."}`}}},
		{"write hello to notes.txt", []llm.ToolCall{{ID: "demo_1", Name: "write_file", Args: `{"path":"notes.txt","content":"hello"}`}}},
		{`write "hello and goodbye" into notes.txt`, []llm.ToolCall{{ID: "demo_1", Name: "write_file", Args: `{"path":"notes.txt","content":"hello and goodbye"}`}}},
		{"fetch https://example.com/a?b=1", []llm.ToolCall{{ID: "demo_1", Name: "http_get", Args: `{"url":"https://example.com/a?b=1"}`}}},
		{"get https://example.org", []llm.ToolCall{{ID: "demo_1", Name: "http_get", Args: `{"url":"https://example.org"}`}}},
		{"what time is it and list files", []llm.ToolCall{
			{ID: "demo_1", Name: "current_time", Args: `{}`},
			{ID: "demo_2", Name: "list_dir", Args: `{"path":"."}`},
		}},
		{"hello there", nil},
		{"tell me a joke", nil},
		{"what is the meaning of time", nil},
		{"time and tell me a joke", nil},
	}
	for _, tt := range tests {
		t.Run(tt.say, func(t *testing.T) {
			resp := demoAsk(t, allTools, llm.Message{Role: llm.RoleSystem, Content: "sys"}, user(tt.say))
			if !reflect.DeepEqual(resp.Message.ToolCalls, tt.calls) {
				t.Errorf("calls = %+v, want %+v", resp.Message.ToolCalls, tt.calls)
			}
			if tt.calls == nil {
				checkChat(t, resp.Message.Content, tt.say)
			}
		})
	}
}

func checkChat(t *testing.T, got, said string) {
	t.Helper()
	for _, want := range []string{"offline demo model", said, "llm.providers", "run `ls -la`", "what time is it"} {
		if !strings.Contains(got, want) {
			t.Errorf("chat reply lacks %q:\n%s", want, got)
		}
	}
}

func TestDemoOnlyOffersPresentTools(t *testing.T) {
	tools := specs("current_time")
	resp := demoAsk(t, tools, user("run ls"))
	if len(resp.Message.ToolCalls) != 0 {
		t.Fatalf("proposed a tool that is not offered: %+v", resp.Message.ToolCalls)
	}
	got := resp.Message.Content
	if !strings.Contains(got, "not available") || !strings.Contains(got, "what time is it") || strings.Contains(got, "run `ls") {
		t.Errorf("reply = %q", got)
	}
	resp = demoAsk(t, nil, user("what time is it"))
	if len(resp.Message.ToolCalls) != 0 || !strings.Contains(resp.Message.Content, "No tools") {
		t.Errorf("without tools: %+v", resp.Message)
	}
	resp = demoAsk(t, nil, user("hi"))
	if !strings.Contains(resp.Message.Content, "No tools") {
		t.Errorf("chat without tools: %q", resp.Message.Content)
	}
}

// afterCall is a conversation where the demo called name with args and the
// tool answered out.
func afterCall(name, args, out string) []llm.Message {
	return []llm.Message{
		user("do it"),
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "demo_1", Name: name, Args: args}}},
		{Role: llm.RoleTool, ToolCallID: "demo_1", Content: out},
	}
}

func TestDemoSummarisesResults(t *testing.T) {
	held := "This action needs human approval; a request was sent to the approvers. Do not retry it; tell the user it awaits approval."
	tests := []struct {
		name      string
		msgs      []llm.Message
		want, not []string
	}{
		{"time", afterCall("current_time", `{}`, "2026-01-02T03:04:05Z Friday UTC"), []string{"The time is 2026-01-02T03:04:05Z Friday UTC."}, nil},
		{"read", afterCall("read_file", `{"path":"notes.txt"}`, "hello\nworld"), []string{"notes.txt", "```\nhello\nworld\n```"}, nil},
		{"list", afterCall("list_dir", `{"path":"."}`, "a.txt\nb/"), []string{"Files in .", "a.txt\nb/"}, nil},
		{"write", afterCall("write_file", `{"path":"n.txt","content":"x"}`, "wrote 1 bytes to n.txt"), []string{"Done: wrote 1 bytes to n.txt"}, nil},
		{"http", afterCall("http_get", `{"url":"https://example.com"}`, "<html>"), []string{"https://example.com", "<html>"}, nil},
		{"shell ok", afterCall("shell", `{"command":"ls -la"}`, "exit 0\n--- stdout\nf1\nf2"), []string{"Output of `ls -la`", "```\n--- stdout\nf1\nf2\n```"}, []string{"failed"}},
		{"shell exit 2", afterCall("shell", `{"command":"ls x"}`, "exit 2\n--- stderr\nls: x: No such file"), []string{"`ls x` failed (exit 2)", "No such file"}, nil},
		{"shell quiet", afterCall("shell", `{"command":"true"}`, "exit 0"), []string{"`true` ran with no output."}, nil},
		{"output with fences", afterCall("read_file", `{"path":"r.md"}`, "```go\nx\n```"), []string{"````\n```go"}, nil},
		{"error", afterCall("read_file", `{"path":"nope"}`, "error: open nope: no such file"), []string{"`read_file` call failed", "no such file"}, nil},
		{"refused", afterCall("shell", `{"command":"rm -rf /"}`, "refused: shell is not allowed here. Stop proposing this; tell the user it is not allowed."),
			[]string{"`shell` call was refused", "shell is not allowed here."}, []string{"Stop proposing", "tell the user"}},
		{"held", afterCall("shell", `{"command":"ls"}`, held), []string{"needs a human's approval", "has not run yet"}, []string{"Do not retry"}},
		{"two results", []llm.Message{
			user("time and files"),
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "current_time", Args: "{}"}, {ID: "b", Name: "list_dir", Args: `{"path":"."}`}}},
			{Role: llm.RoleTool, ToolCallID: "a", Content: "noon"},
			{Role: llm.RoleTool, ToolCallID: "b", Content: "x.txt"},
		}, []string{"The time is noon.\n\nFiles in .:\n```\nx.txt\n```"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := demoAsk(t, allTools, tt.msgs...)
			got := resp.Message.Content
			if len(resp.Message.ToolCalls) != 0 {
				t.Errorf("proposed calls after a result: %+v", resp.Message.ToolCalls)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("summary lacks %q:\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("summary contains %q:\n%s", n, got)
				}
			}
		})
	}
}

func TestDemoSummarisesApprovalOutcomes(t *testing.T) {
	call := "The held shell call with arguments {\"command\":\"ls\"}"
	tests := []struct {
		note string
		want []string
		not  string
	}{
		{"[gatehouse] " + call + " was approved by telegram:1 and ran; its result:\nexit 0\n--- stdout\nfile1",
			[]string{"approved and the action ran", "approved by telegram:1", "```\nexit 0\n--- stdout\nfile1\n```"}, "its result:."},
		{"[gatehouse] " + call + " was approved by telegram:1 and ran, but failed; its output:\nexit 1",
			[]string{"did not succeed", "exit 1"}, ""},
		{"[gatehouse] " + call + " was denied by slack:U1: too risky; it did not run. Tell the user; do not run it again unless the user asks.",
			[]string{"denied", "too risky"}, "Tell the user"},
		{"[gatehouse] " + call + " was not approved in time (the request expired after 15m); it did not run. Tell the user; do not run it again unless the user asks.",
			[]string{"expired", "15m"}, "Tell the user"},
		{"[gatehouse] " + call + " was approved by x:1, but the bot stopped while it was running; it was not run again and its result is unknown. Tell the user.",
			[]string{"interrupted", "result is unknown"}, "Tell the user"},
		{"[gatehouse] Your reply was not sent: it contained a secret", []string{"could not be sent", "contained a secret"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.want[0], func(t *testing.T) {
			resp := demoAsk(t, allTools, user("run ls"), user(tt.note))
			got := resp.Message.Content
			if len(resp.Message.ToolCalls) != 0 {
				t.Errorf("proposed calls: %+v", resp.Message.ToolCalls)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("summary lacks %q:\n%s", w, got)
				}
			}
			if tt.not != "" && strings.Contains(got, tt.not) {
				t.Errorf("summary contains %q:\n%s", tt.not, got)
			}
		})
	}
}

func TestDemoDeterministic(t *testing.T) {
	req := llm.Request{Messages: []llm.Message{user("what time is it and read notes.txt")}, Tools: allTools}
	a, _ := llm.NewDemo().Complete(context.Background(), req)
	b, _ := llm.NewDemo().Complete(context.Background(), req)
	if !reflect.DeepEqual(a, b) || len(a.Message.ToolCalls) != 2 {
		t.Errorf("answers differ or are wrong:\n%+v\n%+v", a, b)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := llm.NewDemo().Complete(ctx, req); err == nil {
		t.Error("cancelled context: want an error")
	}
}
