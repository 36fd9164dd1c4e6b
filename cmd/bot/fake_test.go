package main

import (
	"fmt"
	"strings"
	"testing"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// fakeConfig is a configuration with one provider, the loopback fake
// OpenAI server, and the console as the only gateway; policy is the
// policy.rules list, indented.
func fakeConfig(url, apiKey, policy, logLevel string) string {
	return fmt.Sprintf(`llm:
  providers:
    - name: fake
      base_url: %s
      api_key: %q
      model: fake-model
  timeout: 20s
gateways:
  console: {enabled: true}
hitl:
  approvers: [console:local]
policy:
  rules:
%s
tools:
  workspace: ./workspace
store:
  dsn: gatehouse.db
http:
  listen: ""
log:
  level: %s
  format: json
`, url, apiKey, policy, logLevel)
}

// shellApprove holds shell for approval and allows everything else.
const shellApprove = `    - {tool: shell, decision: approve}
    - {tool: "*", decision: allow}`

// lastMessage returns the last message of a recorded request.
func lastMessage(r fakeopenai.Request) fakeopenai.Message {
	if len(r.Messages) == 0 {
		return fakeopenai.Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// scriptedModel answers like a model that proposes one shell command when
// the user asks for it, acknowledges the held call, and reports what the
// core tells it became of it, prefixed "MODEL:" so tests can tell its words
// from the core's.
func scriptedModel(trigger, command string) func(fakeopenai.Request) fakeopenai.Step {
	return func(r fakeopenai.Request) fakeopenai.Step {
		last := lastMessage(r)
		switch {
		case last.Role == "user" && last.Content == trigger:
			return fakeopenai.ToolCalls(fakeopenai.Call{Name: "shell", Args: fmt.Sprintf(`{"command":%q}`, command)})
		case last.Role == "tool":
			return fakeopenai.Text("MODEL: the command awaits approval.")
		case last.Role == "user" && strings.HasPrefix(last.Content, "[gatehouse]"):
			switch {
			case strings.Contains(last.Content, "stopped while it was running"):
				return fakeopenai.Text("MODEL: the command was interrupted by a restart.")
			case strings.Contains(last.Content, "and ran"):
				return fakeopenai.Text("MODEL: the command ran.")
			}
			return fakeopenai.Text("MODEL: something else happened.")
		}
		return fakeopenai.Text("MODEL: ok.")
	}
}

// startFake starts the fake OpenAI server for the test.
func startFake(t *testing.T, respond func(fakeopenai.Request) fakeopenai.Step) *fakeopenai.Server {
	t.Helper()
	srv := fakeopenai.Start(t)
	srv.Respond(respond)
	return srv
}
