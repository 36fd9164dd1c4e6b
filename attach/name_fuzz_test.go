package attach

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/core"
)

// FuzzSafeName: whatever a sender calls a file, the saved name is a plain
// name: valid UTF-8, 1 to MaxName bytes, no separator, no "..", no
// leading dot or space, no control, bidi or other format character.
func FuzzSafeName(f *testing.F) {
	for _, s := range []string{"../../etc/passwd", "a\nb.txt", ".bashrc", "evil\u202etxt.exe", strings.Repeat("é", 200) + ".txt", "...", "a/..", "\x00", ". .", strings.Repeat("a", 95) + "." + strings.Repeat("b", 10) + ".txt"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := SafeName(in, core.AttachDocument, "")
		if !utf8.ValidString(got) || got == "" || len(got) > MaxName {
			t.Fatalf("SafeName(%q) = %q", in, got)
		}
		if strings.ContainsAny(got, "/\\\x00") || strings.Contains(got, "..") || got[0] == '.' || got[0] == ' ' {
			t.Fatalf("SafeName(%q) = %q", in, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				t.Fatalf("SafeName(%q) = %q holds %U", in, got, r)
			}
		}
	})
}
