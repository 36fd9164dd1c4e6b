package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/supervise"
)

// TestShellSandbox: with the default tools.sandbox (auto, workspace-write
// on this kernel) a shell command the model runs writes the workspace but
// not the directory above it; with `sandbox: off` the same command writes
// both. `bot doctor` says which sandbox the shell gets.
func TestShellSandbox(t *testing.T) {
	t.Parallel()
	if _, err := supervise.Support(); err != nil {
		t.Skip(err)
	}
	for _, tt := range []struct {
		setting, doctor string
		outside         bool
	}{
		{"", "workspace-write (Landlock ABI", false},
		{"off", "off: shell commands run with the bot's own rights", true},
	} {
		t.Run("sandbox="+tt.setting, func(t *testing.T) {
			t.Parallel()
			const trigger = "write two files"
			srv := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
				switch last := lastMessage(r); {
				case last.Role == "user" && last.Content == trigger:
					return fakeopenai.ToolCalls(fakeopenai.Call{Name: "shell",
						Args: `{"command":"echo in > inside.txt; echo out > ../outside.txt"}`})
				case last.Role == "tool":
					return fakeopenai.Text("MODEL: done.")
				}
				return fakeopenai.Text("MODEL: ok.")
			})
			dir := t.TempDir()
			cfg := fakeConfig(srv.URL(), "sk-test", `    - {tool: "*", decision: allow}`, "info")
			if tt.setting != "" {
				cfg = strings.Replace(cfg, "tools:\n", "tools:\n  sandbox: "+tt.setting+"\n", 1)
			}
			writeFile(t, dir, "config.yaml", cfg)
			if r := runOnce(t, dir, baseEnv(dir), "", "doctor"); !strings.Contains(r.stdout, tt.doctor) {
				t.Errorf("doctor does not say %q:\n%s", tt.doctor, r.stdout)
			}
			p := startBot(t, dir, baseEnv(dir))
			p.send(trigger)
			expectLine(t, p, "MODEL: done.")
			p.closeInput()
			if code := p.wait(); code != 0 {
				t.Fatalf("exit %d; want 0", code)
			}
			const rootWarning = "cannot keep a command from reading other processes' environments"
			if root := os.Geteuid() == 0 && tt.setting == ""; root != strings.Contains(p.stderr.String(), rootWarning) {
				t.Errorf("start-up log, running as root %v, sandbox %q:\n%s\nwant the root warning exactly when root and sandboxed", os.Geteuid() == 0, tt.setting, p.stderr.String())
			}
			if got := readFile(t, filepath.Join(dir, "workspace", "inside.txt")); got != "in\n" {
				t.Errorf("inside.txt = %q; want the write inside the workspace done", got)
			}
			_, err := os.Stat(filepath.Join(dir, "outside.txt"))
			if written := err == nil; written != tt.outside {
				t.Errorf("outside.txt written: %v; want %v", written, tt.outside)
			}
		})
	}
}
