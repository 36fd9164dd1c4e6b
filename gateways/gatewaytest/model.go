package gatewaytest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// The helpers below are the model's side of the end-to-end tests, the
// same whichever gateway the user speaks through: turns scripted on the
// fake OpenAI server, and what their tools leave in the workspace.

// Workspace makes a temporary directory for a test's bot and an empty
// "workspace" folder in it for the tools, and returns both.
func Workspace(t testing.TB) (dir, workspace string) {
	t.Helper()
	dir = t.TempDir()
	workspace = filepath.Join(dir, "workspace")
	if err := os.Mkdir(workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, workspace
}

// PushShellTurn scripts the model for a turn that needs approval: ask for
// a shell command that appends a line to ran.txt in the workspace, then
// tell the user it awaits approval ("I asked an approver to allow it."),
// then, after the outcome, report it ("It ran: ran.txt has a new line.").
func PushShellTurn(ai *fakeoai.Server) {
	ai.Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: "call_sh", Name: "shell", Args: `{"command":"echo ran >> ran.txt"}`}),
		fakeoai.Text("I asked an approver to allow it."),
		fakeoai.Text("It ran: ran.txt has a new line."),
	)
}

// ShellRuns counts the lines a shell command appended to ran.txt in
// workspace: how often PushShellTurn's command ran.
func ShellRuns(t testing.TB, workspace string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(workspace, "ran.txt"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// PushClockTurn scripts the model for a turn with a tool call: call
// current_time for UTC (call id "call_t"), then answer with answer.
func PushClockTurn(ai *fakeoai.Server, answer string) {
	ai.Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: "call_t", Name: "current_time", Args: `{"timezone":"UTC"}`}),
		fakeoai.Text(answer),
	)
}

// PushSlowClockTurn is PushClockTurn with a model that thinks until
// shown returns true (the chat shows "typing…", which a turn shows only
// once the model has taken core.TypingDelay).
func PushSlowClockTurn(ai *fakeoai.Server, answer string, shown func() bool) {
	ai.Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: "call_t", Name: "current_time", Args: `{"timezone":"UTC"}`}).Until(shown),
		fakeoai.Text(answer),
	)
}

// CheckClockTurn fails t unless the model saw the turn PushClockTurn
// scripts whole: two requests, the first ending with the user's question,
// the second with the tool's result fed back for call_t.
func CheckClockTurn(t testing.TB, ai *fakeoai.Server, question string) {
	t.Helper()
	reqs := ai.Requests()
	if len(reqs) != 2 || reqs[0].LastUser() != question {
		t.Fatalf("model requests %+v", reqs)
	}
	if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.Role != "tool" || last.ToolCallID != "call_t" {
		t.Fatalf("tool result not fed back: %+v", last)
	}
}

// LongAnswer is a reply of more than 6,000 characters, in sentences and
// paragraphs, with some Markdown; it ends with LongAnswerEnd.
func LongAnswer() string {
	var b strings.Builder
	for i := 1; b.Len() < 6200; i++ {
		fmt.Fprintf(&b, "Sentence %d tells **part %d** of the plan, and `step-%d` follows it. ", i, i, i)
		if i%7 == 0 {
			b.WriteString("\n\n")
		}
	}
	return b.String() + LongAnswerEnd
}

// LongAnswerEnd is the last sentence of LongAnswer.
const LongAnswerEnd = "That is the whole plan."
