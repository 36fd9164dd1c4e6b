package app_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestConsoleCommandsWhileTurnHangs: through the wired bot (console, hitl
// broker, engine), /pending, /status and a mistyped command are answered
// while the console's turn still waits on a hanging model, and none of
// them reaches the model; a message over engine.max_message is refused.
func TestConsoleCommandsWhileTurnHangs(t *testing.T) {
	fake := fakeoai.Start(t)
	fake.Push(fakeoai.Hang())
	dir := t.TempDir()
	yaml := fmt.Sprintf("llm: {providers: [{name: fake, base_url: %q, model: fake-model}]}\n"+
		"engine: {max_message: 64}\ntools: {workspace: %q}\nstore: {dsn: %q}\nhttp: {listen: \"\"}\n",
		fake.URL(), filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"))
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
	say("a slow question")
	testutil.WaitFor(t, "the turn's request at the model", func() bool { return len(fake.Requests()) == 1 })
	for _, c := range []struct{ line, want string }{
		{"/pending", "No pending approvals."},
		{"/status", "Model: fake-model (fake)"},
		{"/aprove K7Q2MX9P", "unknown command /aprove"}, // "did you mean" needs the broker's CommandLister
		{strings.Repeat("z", 65), "the limit is 64 bytes"},
	} {
		say(c.line)
		testutil.WaitFor(t, "the answer to "+c.line[:min(len(c.line), 20)], func() bool { return strings.Contains(out.String(), c.want) })
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("the model saw %d requests; commands must not reach it", n)
	}
	say("/cancel")
	testutil.WaitFor(t, "the /cancel answer", func() bool { return strings.Contains(out.String(), "Cancelled the turn in progress") })
	typed.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if strings.Contains(out.String(), "Sorry") {
		t.Errorf("the cancelled turn reported an error:\n%s", out.String())
	}
}
