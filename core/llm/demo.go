package llm

import (
	"context"
	"fmt"
	"strings"
)

// DemoName is the demo model's provider name.
const DemoName = "demo"

// Demo is the offline demo model: no network, no intelligence. It turns a
// few clear requests into calls of the tools it is offered, summarises tool
// results and approval outcomes, and otherwise says what it is and what it
// can do. It is deterministic. It calls no API and spends no tokens: its
// answers report no usage, so they count against no budget.
type Demo struct{}

var _ Provider = (*Demo)(nil)

// NewDemo returns the demo model.
func NewDemo() *Demo { return &Demo{} }

// Name returns DemoName.
func (*Demo) Name() string { return DemoName }

// Complete answers the conversation's last message.
func (d *Demo) Complete(ctx context.Context, req Request) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, fmt.Errorf("%s: %w", DemoName, err)
	}
	// No Usage: a made-up token count would count against the budgets
	// (budget.*) though nothing was spent.
	return Response{Message: d.answer(req), Provider: DemoName}, nil
}

func (d *Demo) answer(req Request) Message {
	last := lastMessage(req.Messages)
	switch {
	case last < 0:
		return assistantText(chatReply("", req.Tools))
	case req.Messages[last].Role == RoleTool:
		return assistantText(summariseResults(req.Messages, last))
	}
	text := req.Messages[last].Content
	if note, ok := strings.CutPrefix(strings.TrimSpace(text), gatehouseNote); ok {
		return assistantText(summariseOutcome(note))
	}
	return proposeCalls(text, req.Tools)
}

// lastMessage returns the index of the last message that is not a system
// message, or -1.
func lastMessage(msgs []Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != RoleSystem {
			return i
		}
	}
	return -1
}

func assistantText(s string) Message { return Message{Role: RoleAssistant, Content: s} }

// proposeCalls turns a clear request into tool calls when every tool it
// needs is offered; otherwise it chats back.
func proposeCalls(text string, tools []ToolSpec) Message {
	intents := parseIntents(text)
	if len(intents) == 0 {
		return assistantText(chatReply(text, tools))
	}
	var calls []ToolCall
	for i, in := range intents {
		if !offered(tools, in.tool) {
			return assistantText(fmt.Sprintf(
				"I would use the `%s` tool for that, but it is not available here.\n\n%s", in.tool, abilities(tools)))
		}
		calls = append(calls, in.call(i+1))
	}
	return Message{Role: RoleAssistant, ToolCalls: calls}
}

func offered(tools []ToolSpec, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// demoExamples are the requests the demo understands, by tool, in an
// order that works on a fresh checkout, where the workspace is empty:
// notes.txt is written (once approved) before it is read.
var demoExamples = []struct{ tool, example string }{
	{"current_time", "what time is it"},
	{"list_dir", "list files"},
	{"write_file", "write hello to notes.txt"},
	{"read_file", "read notes.txt"},
	{"shell", "run `ls -la`"},
	{"http_get", "fetch https://example.com"},
}

func chatReply(text string, tools []ToolSpec) string {
	var b strings.Builder
	b.WriteString("I'm the offline demo model: no real language model is configured, so I only understand a few simple requests.")
	if g := gist(text, 80); g != "" {
		fmt.Fprintf(&b, " You said: “%s”.", g)
	}
	b.WriteString("\n\n")
	b.WriteString(abilities(tools))
	b.WriteString("\n\nTo talk to a real model, configure one under llm.providers in the configuration.")
	return b.String()
}

// abilities lists example requests for the offered tools.
func abilities(tools []ToolSpec) string {
	var ex []string
	for _, e := range demoExamples {
		if offered(tools, e.tool) {
			ex = append(ex, "“"+e.example+"”")
		}
	}
	if len(ex) == 0 {
		return "No tools are enabled here, so all I can do is answer like this."
	}
	return "Things I can do: " + strings.Join(ex, ", ") + "."
}

// gist is the first line of text, spaces collapsed, at most n runes.
func gist(text string, n int) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.Join(strings.Fields(line), " ")
	if r := []rune(line); len(r) > n {
		return string(r[:n]) + "…"
	}
	return line
}
