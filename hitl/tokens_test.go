package hitl

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

func TestTokenAlphabetHasNoLookAlikes(t *testing.T) {
	if strings.ContainsAny(TokenAlphabet, "0O1IL") {
		t.Errorf("alphabet %q contains a look-alike", TokenAlphabet)
	}
	seen := map[rune]bool{}
	for _, r := range TokenAlphabet {
		if seen[r] {
			t.Errorf("alphabet repeats %q", r)
		}
		seen[r] = true
	}
	if len(TokenAlphabet) != 31 {
		t.Errorf("alphabet has %d characters, want 31", len(TokenAlphabet))
	}
}

func TestNewTokenShapeAndUniqueness(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 {
		tok, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if norm, ok := NormalizeToken(tok); !ok || norm != tok {
			t.Fatalf("token %q is not canonical", tok)
		}
		if seen[tok] {
			t.Fatalf("token %q drawn twice", tok)
		}
		seen[tok] = true
	}
}

func TestNewTokenRejectsBiasedBytes(t *testing.T) {
	// 248..255 would favour the first 8 characters: they must be skipped.
	src := append(bytes.Repeat([]byte{255, 248}, 8), 0, 1, 2, 3, 4, 5, 6, 38, 31, 62)
	src = append(src, make([]byte, 32)...)
	tok, err := newTokenFrom(bytes.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if want := "23456789"; tok != want {
		t.Errorf("token = %q, want %q (rejected bytes skipped, b%%31 indexes)", tok, want)
	}
	tok, err = newTokenFrom(bytes.NewReader(append([]byte{30, 31, 62, 247, 0, 0, 0, 0}, make([]byte, 8)...)))
	if err != nil || tok != "Z22Z2222" {
		t.Errorf("token = %q, %v; want Z22Z2222", tok, err)
	}
}

func TestNewTokenReadError(t *testing.T) {
	boom := errors.New("boom")
	if _, err := newTokenFrom(iotest.ErrReader(boom)); !errors.Is(err, boom) {
		t.Errorf("err = %v, want wrapping boom", err)
	}
}

func TestNewTokenIsRoughlyUniform(t *testing.T) {
	counts := map[rune]int{}
	const tokens = 4000
	for range tokens {
		tok, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range tok {
			counts[r]++
		}
	}
	// Expected about 1032 per character; a biased generator (b%31 without
	// rejection) would still pass, so this only catches gross errors such
	// as unused characters.
	want := tokens * TokenLength / len(TokenAlphabet)
	for _, r := range TokenAlphabet {
		if c := counts[r]; c < want*7/10 || c > want*13/10 {
			t.Errorf("character %q drawn %d times, want about %d", r, c, want)
		}
	}
}

func TestNormalizeToken(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"K7Q2MX9P", "K7Q2MX9P", true},
		{"k7q2mx9p", "K7Q2MX9P", true},
		{"k7q2-mx9p", "K7Q2MX9P", true},
		{"K7Q2 MX9P", "K7Q2MX9P", true},
		{" k7q2–mx9p ", "K7Q2MX9P", true},
		{"K7Q2MX9", "", false},
		{"K7Q2MX9PP", "", false},
		{"K7Q2MX0P", "", false},
		{"K7Q2MXOP", "", false},
		{"K7Q2MX1P", "", false},
		{"K7Q2MXIP", "", false},
		{"K7Q2MXLP", "", false},
		{"k7q2mxlp", "", false},
		{"K7Q2MX9Ä", "", false},
		{"K7Q2MX9ı", "", false},
		{"", "", false},
		{"--------", "", false},
	} {
		got, ok := NormalizeToken(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("NormalizeToken(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
