package console_test

import (
	"context"
	"testing"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways/console"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestRepliesCannotDriveTheTerminal: a reply that would clear the screen,
// return the carriage to overwrite a line, or start a C1 control sequence
// is printed with every such byte escaped; the bytes written hold no
// control character but the newline and the tab.
func TestRepliesCannotDriveTheTerminal(t *testing.T) {
	for _, tt := range []struct {
		name, text, want string
		escaped          bool
	}{
		{"reply", "ok\x1b[2J\x1b[H\rApproval needed: ls\x9b\u009b2J\x07\x7f\xff\tend",
			`ok\x1b[2J\x1b[H\rApproval needed: ls\x9b\u009b2J\x07\x7f\xff` + "\tend", false},
		{"literal escapes stay distinguishable", `echo \x1b and \r`, `echo \\x1b and \\r`, false},
		{"bidi", "a\u202eb", `a\u202eb`, false},
		{"approval request already escaped by hitl", "`rm x #\\r\\x1bls`\x1b[2J", "`rm x #\\r\\x1bls`\\x1b[2J", true},
		{"approval outcome with raw tool output", "`rm x #\\r` ran.\n```\nout\x1b[2J\n```", "`rm x #\\r` ran.\n```\nout\\x1b[2J\n```", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := &testutil.SyncBuffer{}
			c := console.New(nil, out, false)
			a := core.Action{Kind: core.ActionReply, Conv: console.Conversation(), Text: tt.text, Escaped: tt.escaped}
			if _, err := c.Act(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if want := "gatehouse › " + tt.want + "\n"; got != want {
				t.Errorf("wrote %q\n want %q", got, want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("wrote invalid UTF-8: %q", got)
			}
			for i, r := range got {
				if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f {
					t.Errorf("wrote control %U at byte %d: %q", r, i, got)
				}
			}
		})
	}
}
