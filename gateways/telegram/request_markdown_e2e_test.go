package telegram_test

import (
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/config"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

// TestE2ERequestShowsArgumentValuesVerbatim: an approval request shows
// every argument as it will be used. The gateway renders the request's
// Markdown, so a value outside code would lose its underscores, asterisks
// and link targets on the approver's screen: "rm -rf __pycache__" read as
// a bold "rm -rf pycache".
func TestE2ERequestShowsArgumentValuesVerbatim(t *testing.T) {
	e := startE2EWith(t, faketg.Options{}, func(c *config.Config) {
		c.Policy.Rules = append([]config.Rule{{Tool: "write_file", Decision: config.DecisionApprove}}, c.Policy.Rules...)
	})
	content := `rm -rf __pycache__ *.tmp* [docs](https://evil.example/x)`
	e.ai.Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: "call_w", Name: "write_file",
			Args: `{"path":"clean.sh","content":` + jsonQuote(content) + `}`}),
		fakeoai.Text("I asked an approver."),
	)
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: team, Text: "@gatehouse_bot write clean.sh"})
	req, _ := e.waitRequest(t, team.ID)
	if !strings.Contains(req.Plain, content) {
		t.Errorf("the request does not show the content as it will be written (%s):\n%s", content, req.Plain)
	}
}

// jsonQuote quotes s as a JSON string (s has no " or \ here).
func jsonQuote(s string) string { return `"` + s + `"` }
