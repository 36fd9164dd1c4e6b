package main

import (
	"strings"
	"testing"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// TestShellKeepsGatewayVariables: the shell tool of the real binary keeps
// the gateways' configuration variables (their prefixes come from the
// gateway table) from commands, even ones that look harmless, and passes
// ordinary ones.
func TestShellKeepsGatewayVariables(t *testing.T) {
	t.Parallel()
	const trigger = "print the environment"
	srv := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		last := lastMessage(r)
		switch {
		case last.Role == "user" && last.Content == trigger:
			return fakeopenai.ToolCalls(fakeopenai.Call{Name: "shell", Args: `{"command":"env; echo end-of-env"}`})
		case last.Role == "tool":
			return fakeopenai.Text("MODEL: printed.")
		}
		return fakeopenai.Text("MODEL: ok.")
	})
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fakeConfig(srv.URL(), "sk-shellenv-0123456789", `    - {tool: "*", decision: allow}`, "info"))
	env := baseEnv(dir, "DISCORD_GUILD=guild-visible-31", "SLACK_CHANNEL=general-32", "TELEGRAM_PROXY=proxy-33", "GATEHOUSE_VISIBLE=visible-34")
	p := startBot(t, dir, env)
	p.send(trigger)
	expectLine(t, p, "MODEL: printed.")
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; want 0", code)
	}
	var out string
	for _, r := range srv.Requests() {
		for _, m := range r.Messages {
			if m.Role == "tool" && strings.Contains(m.Content, "end-of-env") {
				out = m.Content
			}
		}
	}
	if out == "" {
		t.Fatal("no request carried the output of `env`; the command did not run")
	}
	for _, gone := range []string{"guild-visible-31", "general-32", "proxy-33"} {
		if strings.Contains(out, gone) {
			t.Errorf("the shell's environment shows %q", gone)
		}
	}
	if !strings.Contains(out, "GATEHOUSE_VISIBLE=visible-34") {
		t.Errorf("an ordinary variable was removed:\n%s", out)
	}
}
