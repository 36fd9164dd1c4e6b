package pairing

import (
	"bytes"
	"crypto/rand"
	"strings"
	"testing"
)

// TestNewCode: codes are CodeLen characters of Alphabet, which holds no
// character read for another, and every character of it comes up.
func TestNewCode(t *testing.T) {
	if strings.ContainsAny(Alphabet, "0O1IL") {
		t.Fatalf("Alphabet %q holds an ambiguous character", Alphabet)
	}
	seen := map[rune]bool{}
	for range 500 {
		c, err := NewCode(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := ParseCode(c); !ok || got != c || len(c) != CodeLen {
			t.Fatalf("NewCode gave %q, which ParseCode reads as %q, %v", c, got, ok)
		}
		for _, r := range c {
			seen[r] = true
		}
	}
	if len(seen) != len(Alphabet) {
		t.Errorf("500 codes used %d of the %d characters", len(seen), len(Alphabet))
	}
	// Bytes past the last whole multiple of the alphabet are drawn again,
	// never folded onto its first characters.
	c, err := NewCode(bytes.NewReader(append(bytes.Repeat([]byte{255}, 2*CodeLen), make([]byte, 2*CodeLen)...)))
	if err != nil || c != strings.Repeat("A", CodeLen) {
		t.Errorf("NewCode over rejected bytes then zeros = %q, %v; want %q", c, err, strings.Repeat("A", CodeLen))
	}
	if _, err := NewCode(bytes.NewReader(nil)); err == nil {
		t.Error("NewCode from an empty reader: no error")
	}
}

func TestParseCode(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"K7QMX9P2", "K7QMX9P2", true},
		{"  k7qm-x9p2 ", "K7QMX9P2", true},
		{"K7QM X9P2", "K7QMX9P2", true},
		{"K7QMX9P", "", false},    // short
		{"K7QMX9P22", "", false},  // long
		{"K7QMX9P0", "", false},   // 0 is no code character
		{"K7QMX9PO", "", false},   // nor O, I, L, 1
		{"K7QMX9PÄ", "", false},   // nor anything beyond ASCII
		{"K7QM\nX9P2", "", false}, // one line
		{"", "", false},
		{strings.Repeat("A", 100), "", false},
	} {
		if got, ok := ParseCode(tt.in); got != tt.want || ok != tt.ok {
			t.Errorf("ParseCode(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzParseCode: any /pair argument either is refused or reads as a code
// of CodeLen Alphabet characters that reads as itself again; it never
// panics.
func FuzzParseCode(f *testing.F) {
	for _, s := range []string{"K7QMX9P2", "k7qm-x9p2", "", "0000", "ÄÖÜ", "A-B-C-D-E-F-G-H", "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := ParseCode(s)
		if !ok {
			if c != "" {
				t.Fatalf("ParseCode(%q) refused but returned %q", s, c)
			}
			return
		}
		if len(c) != CodeLen || strings.Trim(c, Alphabet) != "" {
			t.Fatalf("ParseCode(%q) = %q: not %d characters of the alphabet", s, c, CodeLen)
		}
		if again, ok := ParseCode(c); !ok || again != c {
			t.Fatalf("ParseCode(%q) = %q, %v; want itself", c, again, ok)
		}
	})
}

func TestParseIdentity(t *testing.T) {
	for in, ok := range map[string]bool{
		"gw:4242": true, " gw:U0LEAD ": true, "gw:": false, ":1": false, "4242": false,
		"gw:42 43": false, "gw:4\u202e2": false, "gw:" + strings.Repeat("9", 300): false,
	} {
		if _, got := parseIdentity(in); got != ok {
			t.Errorf("parseIdentity(%q) ok = %v; want %v", in, got, ok)
		}
	}
}
