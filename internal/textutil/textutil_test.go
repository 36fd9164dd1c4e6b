package textutil

import "testing"

func TestShorten(t *testing.T) {
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"héllo", 2, "h…"}, // never cuts inside é
		{"", 0, ""},
	} {
		if got := Shorten(tt.in, tt.max); got != tt.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}
