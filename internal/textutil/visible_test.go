package textutil

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestVisible(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain text\twith tab\nand newline", "plain text\twith tab\nand newline"},
		{"clear\x1b[2Jscreen", `clear\x1b[2Jscreen`},
		{"fake\rover", `fake\rover`},
		{"csi \u009b2J", `csi \u009b2J`},
		{"del\x7f bell\x07 nul\x00", `del\x7f bell\x07 nul\x00`},
		{"bad \xff\xfe byte", `bad \xff\xfe byte`},
		{"rlo \u202e lri \u2066", `rlo \u202e lri \u2066`},
		{"emoji 👨\u200d👩 zwsp\u200b", "emoji 👨\u200d👩 zwsp\u200b"}, // format characters that are not bidi pass
		{`C:\Users\me a\nb \d+ \t`, `C:\Users\me a\nb \d+ \t`},     // backslashes that read as no escape stay single
		{`text \x1b and \r and \u009b`, `text \\x1b and \\r and \\u009b`},
		{"\\\x1b", `\\\x1b`},
		{`\\`, `\\\`},
		{`end\`, `end\`},
		{`\xg1 \u12`, `\xg1 \u12`},
	} {
		if got := Visible(tt.in); got != tt.want {
			t.Errorf("Visible(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestGraphic(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"ls -l\nwc", "ls -l\nwc"},
		{"echo safe\u202e; rm -rf ~ #\u2066x\r", `echo safe\u202e; rm -rf ~ #\u2066x\r`},
		{"a\tb zw\u200bsp ls\u2028ps", `a\tb zw\u200bsp ls\u2028ps`},
		{"tag\U000E0041", `tag\U000e0041`},
		{`sed 's/\t/ /'`, `sed 's/\\t/ /'`},
		{`printf '\U0001F600'`, `printf '\\U0001F600'`},
	} {
		if got := Graphic(tt.in); got != tt.want {
			t.Errorf("Graphic(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if HasHidden(`a\tb`) || !HasHidden("a\tb") || !HasHidden("\xff") {
		t.Error("HasHidden counts the wrong things")
	}
}

func TestGraphicLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"notes.txt", "notes.txt"},
		{"x\n• forged.txt", `x\n• forged.txt`},
		{`a\nb`, `a\\nb`}, // a literal backslash-n stays distinguishable from a newline
		{"tab\there\x1b", `tab\there\x1b`},
		{`C:\dir`, `C:\dir`},
	} {
		if got := GraphicLine(tt.in); got != tt.want {
			t.Errorf("GraphicLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := Graphic("a\nb"); got != "a\nb" {
		t.Errorf("Graphic escapes the newline now: %q", got)
	}
}

func TestGraphicJSON(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"command": "echo \\t \u202e"}`, `{"command": "echo \\t \u202e"}`},
		{"{\"command\": \"echo \u202e\u200b\"}", `{"command": "echo \u202e\u200b"}`},
		{"{\"k\": \"\U000E0041\"}", `{"k": "\udb40\udc41"}`},
	} {
		if got := GraphicJSON(tt.in); got != tt.want {
			t.Errorf("GraphicJSON(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzVisible(f *testing.F) {
	for _, s := range []string{"", "\x1b[2J", "a\rb", "\u009b", `\x1b`, "\\\x1b", `\\\`, "\xff", "\u202e", `\U0001F600`, "\t\n", "\U000E0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for name, e := range map[string]escaper{"Visible": terminal, "Graphic": chat, "GraphicLine": line} {
			out := e.escape(in)
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q) = %q: invalid UTF-8", name, in, out)
			}
			for _, r := range out {
				if (r != '\n' || e.newline) && (r != '\t' || e.tab) && e.hidden(r) {
					t.Fatalf("%s(%q) = %q: emits %U", name, in, out, r)
				}
				if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7F && r <= 0x9F {
					t.Fatalf("%s(%q) = %q: emits control %U", name, in, out, r)
				}
			}
			if back := unescape(out, e); back != in {
				t.Fatalf("%s(%q) = %q reads back as %q: ambiguous", name, in, out, back)
			}
		}
		if got := GraphicJSON(in); strings.ContainsFunc(got, func(r rune) bool { return r != '\n' && chatHidden(r) }) {
			t.Fatalf("GraphicJSON(%q) = %q: emits a hidden rune", in, got)
		}
	})
}

// unescape reads text written by Visible or Graphic (as e says) back, as
// a reader would: `\\` is a backslash, a complete escape is its byte or
// rune, and any other backslash is itself.
func unescape(s string, e escaper) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		rest := s[i+1:]
		switch {
		case rest[0] == '\\':
			b.WriteByte('\\')
			i++
		case rest[0] == 'r':
			b.WriteByte('\r')
			i++
		case rest[0] == 't' && e.tab:
			b.WriteByte('\t')
			i++
		case rest[0] == 'n' && e.newline:
			b.WriteByte('\n')
			i++
		case rest[0] == 'x' && hexRun(rest[1:], 2):
			v, _ := strconv.ParseUint(rest[1:3], 16, 8)
			b.WriteByte(byte(v))
			i += 3
		case rest[0] == 'u' && hexRun(rest[1:], 4):
			v, _ := strconv.ParseUint(rest[1:5], 16, 32)
			b.WriteRune(rune(v))
			i += 5
		case rest[0] == 'U' && e.big && hexRun(rest[1:], 8):
			v, _ := strconv.ParseUint(rest[1:9], 16, 32)
			b.WriteRune(rune(v))
			i += 9
		default:
			b.WriteByte('\\')
		}
	}
	return b.String()
}

func TestBidiControlsAreFormat(t *testing.T) {
	// Graphic must escape everything Visible does.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if terminalHidden(r) && !chatHidden(r) {
			t.Fatalf("%U hidden on a terminal but not in chat", r)
		}
	}
}

func TestStorable(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"plain é 👍 \\x00 \t\r\x1b", "plain é 👍 \\x00 \t\r\x1b"}, // only NUL and invalid bytes change
		{"a\x00b", `a\x00b`},
		{"find -print0\x00x\x00", `find -print0\x00x\x00`},
		{"bad \xff\xfe byte \xe2\x82", `bad \xff\xfe byte \xe2\x82`},
	} {
		got := Storable(tt.in)
		if got != tt.want {
			t.Errorf("Storable(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if NeedsStorable(tt.in) != (got != tt.in) {
			t.Errorf("NeedsStorable(%q) = %v, but Storable changes it: %v", tt.in, NeedsStorable(tt.in), got != tt.in)
		}
		if NeedsStorable(got) {
			t.Errorf("Storable(%q) = %q still needs Storable", tt.in, got)
		}
	}
}
