package tools

import (
	"os"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/supervise"
)

// TestMain lets the test binary be the shell's supervisor, as the bot's
// binary is: the shell re-executes os.Executable() with supervise.Arg.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == supervise.Arg {
		os.Exit(supervise.Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}
