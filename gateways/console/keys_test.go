package console

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// readKeys returns the lines keyReader makes of keys, up to the end of
// input, and what it echoed.
func readKeys(t *testing.T, in io.Reader) (lines []string, cuts []bool, echo string) {
	t.Helper()
	out := &testutil.SyncBuffer{}
	c := New(in, out, true)
	k := newKeyReader(c)
	for {
		line, cut, err := k.next()
		if errors.Is(err, io.EOF) {
			return lines, cuts, out.String()
		}
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		lines, cuts = append(lines, line), append(cuts, cut)
	}
}

// TestKeyReaderEditsLikeTheTerminal: the keys the terminal's own line
// editing knows do the same when the console edits the line.
func TestKeyReaderEditsLikeTheTerminal(t *testing.T) {
	for _, tc := range []struct{ name, keys, line, echo string }{
		{"enter", "hello\r", "hello", "hello\n"},
		{"newline", "hello\n", "hello", "hello\n"},
		{"backspace", "hellp\x7fo\r", "hello", "hellp\b \bo\n"},
		{"ctrl-h", "ab\bc\r", "ac", "ab\b \bc\n"},
		{"backspace erases a character, not a byte", "né\x7f\x7fo\r", "o", "né\b \b\b \bo\n"},
		{"backspace on an empty line", "\x7f\x7fa\r", "a", "a\n"},
		{"ctrl-w", "one two  \x17three\r", "one three", "one two  " + strings.Repeat(eraseRune, 5) + "three\n"},
		{"ctrl-u", "oops\x15ok\r", "ok", "oops" + strings.Repeat(eraseRune, 4) + "ok\n"},
		{"arrow keys and alt-x are dropped", "a\x1b[A\x1b[1;5Cb\x1bOPc\x1bxd\r", "abcd", "abcd\n"},
		{"ctrl-d inside a line is ignored", "ab\x04c\r", "abc", "abc\n"},
		{"other controls are dropped", "a\x01\x07\x0fb\tc\r", "ab\tc", "ab\tc\n"},
		{"ctrl-d on an empty line ends the input", "\x04later\r", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, _, echo := readKeys(t, strings.NewReader(tc.keys))
			if got := strings.Join(lines, "|"); got != tc.line {
				t.Errorf("line %q; want %q", got, tc.line)
			}
			if echo != tc.echo {
				t.Errorf("echo %q; want %q", echo, tc.echo)
			}
		})
	}
}

// TestKeyReaderTakesLongPastesWhole: a paste far past the terminal's
// 4,095-byte line, arriving a few bytes at a time, is one line; one past
// MaxLine is cut there, said to be cut, and the next line is whole.
func TestKeyReaderTakesLongPastesWhole(t *testing.T) {
	long := strings.Repeat("0123456789", 1000)
	lines, cuts, _ := readKeys(t, iotest.HalfReader(strings.NewReader(long+"\r"+long+"\r")))
	if len(lines) != 2 || lines[0] != long || lines[1] != long || cuts[0] || cuts[1] {
		t.Fatalf("got %d lines (cut %v); want the two 10,000-byte lines whole", len(lines), cuts)
	}

	huge := strings.Repeat("é", MaxLine) // 2 MiB
	lines, cuts, _ = readKeys(t, strings.NewReader(huge+"\rnext\r"))
	if len(lines) != 2 || !cuts[0] || cuts[1] || lines[1] != "next" {
		t.Fatalf("got %d lines (cut %v); want the huge one cut and the next whole", len(lines), cuts)
	}
	if len(lines[0]) != MaxLine || lines[0] != huge[:MaxLine] {
		t.Errorf("the cut line has %d bytes; want the first %d", len(lines[0]), MaxLine)
	}
}

// TestNoticeShowsWhatWasTyped: a reply printed while the user is typing
// is followed by the prompt and what they had typed, so the line they go
// on editing is the one they see.
func TestNoticeShowsWhatWasTyped(t *testing.T) {
	out := &testutil.SyncBuffer{}
	pr, pw := io.Pipe()
	c := New(pr, out, true)
	k := newKeyReader(c)
	got := make(chan string, 1)
	go func() {
		line, _, _ := k.next()
		got <- line
	}()
	if _, err := pw.Write([]byte("half a li")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the echo", func() bool { return out.String() == "half a li" })
	c.notice("a reply")
	if want := "half a li\rgatehouse › a reply\nyou › half a li"; out.String() != want {
		t.Errorf("output %q; want %q", out.String(), want)
	}
	if _, err := pw.Write([]byte("ne\r")); err != nil {
		t.Fatal(err)
	}
	if line := <-got; line != "half a line" {
		t.Errorf("line %q; want %q", line, "half a line")
	}
	pw.Close()
}
