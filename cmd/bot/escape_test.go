package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// TestConsoleShowsTerminalEscapesEscaped: a model reply that would clear
// the screen, move the cursor, overwrite its line with a carriage return
// and start a C1 control sequence reaches the console's stdout with every
// such character escaped; no control byte but the newline is written.
func TestConsoleShowsTerminalEscapesEscaped(t *testing.T) {
	t.Parallel()
	const reply = "MODEL: done\x1b[2J\x1b[1;1H\rApproval needed: ls\u009b2J\x07\x7f end"
	srv := startFake(t, func(fakeopenai.Request) fakeopenai.Step { return fakeopenai.Text(reply) })
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fakeConfig(srv.URL(), "sk-unused-key", shellApprove, "warn"))
	p := startBot(t, dir, baseEnv(dir))
	p.send("hello")
	line := expectLine(t, p, "MODEL: done")
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; want 0", code)
	}
	const want = `MODEL: done\x1b[2J\x1b[1;1H\rApproval needed: ls\u009b2J\x07\x7f end`
	if !strings.Contains(line, want) {
		t.Errorf("console line %q\nwant it to contain %q", line, want)
	}
	out := p.stdout()
	for i, r := range out {
		if r < 0x20 && r != '\n' || r >= 0x7f && r <= 0x9f {
			t.Errorf("stdout holds control %U at byte %d: %q", r, i, out)
		}
	}
	if !utf8.ValidString(out) {
		t.Errorf("stdout is not valid UTF-8: %q", out)
	}
}
