package textutil

import (
	"regexp"
	"strings"
	"testing"
)

func TestShapeMatchesTheRegexpItReplaces(t *testing.T) {
	word64 := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	digits20 := regexp.MustCompile(`^[0-9]{1,20}$`)
	for _, s := range []string{"", "a", "A-z_9", strings.Repeat("x", 64), strings.Repeat("x", 65), "a b", "é", "a.b", "\x00", "12345678901234567890", "123456789012345678901", "12a", "-"} {
		if got, want := Shape(s, 1, 64, Word), word64.MatchString(s); got != want {
			t.Errorf("Shape(%q, 1, 64, Word) = %v; the regexp says %v", s, got, want)
		}
		if got, want := Shape(s, 1, 20, Digits), digits20.MatchString(s); got != want {
			t.Errorf("Shape(%q, 1, 20, Digits) = %v; the regexp says %v", s, got, want)
		}
	}
}

func FuzzShape(f *testing.F) {
	word := regexp.MustCompile(`^[A-Za-z0-9_-]{0,16}$`)
	for _, s := range []string{"", "ok", "a_b-c", "sp ace", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Shape(s, 0, 16, Word), word.MatchString(s); got != want {
			t.Errorf("Shape(%q, 0, 16, Word) = %v; the regexp says %v", s, got, want)
		}
	})
}
