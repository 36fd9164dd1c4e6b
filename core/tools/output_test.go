package tools

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"fits", "hello", 5, "hello"},
		{"ascii", strings.Repeat("a", 100), 30, strings.Repeat("a", 6) + "…[truncated 94 bytes]"},
		{"utf8 boundary", strings.Repeat("é", 50), 30, strings.Repeat("é", 3) + "…[truncated 94 bytes]"},
		{"tiny max", strings.Repeat("a", 100), 3, "…[truncated 100 bytes]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Truncate(tt.in, tt.max)
			if got != tt.want {
				t.Errorf("Truncate = %q, want %q", got, tt.want)
			}
			if len(got) > max(tt.max, len(truncMarker(len(tt.in)))) {
				t.Errorf("%d bytes, over the cap", len(got))
			}
			if !utf8.ValidString(got) {
				t.Error("invalid UTF-8")
			}
		})
	}
}

func TestCappedBuffer(t *testing.T) {
	b := &cappedBuffer{max: 4}
	for _, p := range []string{"ab", "cé", "fgh"} { // "é" straddles the cap
		if n, err := b.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if got, want := b.String(), "abc…[truncated 5 bytes]"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}
