package secrets

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkRedact redacts a 16 KiB text, with one secret in it, against a
// set of 10 secrets. It reports numbers; nothing asserts a timing.
func BenchmarkRedact(b *testing.B) {
	vals := make([]string, 10)
	for i := range vals {
		vals[i] = fmt.Sprintf("secret-value-%02d-Zq8LmT4vRx", i)
	}
	set := New(vals...)
	line := "the quick brown fox jumps over the lazy dog; 0123456789 ABCDEF\n"
	text := strings.Repeat(line, 16<<10/len(line))
	text = text[:len(text)/2] + vals[3] + text[len(text)/2:]
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		if out := set.Redact(text); strings.Contains(out, vals[3]) {
			b.Fatal("secret left")
		}
	}
}

// BenchmarkRedactClean is BenchmarkRedact on a text with nothing to remove,
// the common case.
func BenchmarkRedactClean(b *testing.B) {
	vals := make([]string, 10)
	for i := range vals {
		vals[i] = fmt.Sprintf("secret-value-%02d-Zq8LmT4vRx", i)
	}
	set := New(vals...)
	line := "the quick brown fox jumps over the lazy dog; 0123456789 ABCDEF\n"
	text := strings.Repeat(line, 16<<10/len(line))
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		set.Redact(text)
	}
}

// BenchmarkRedactBlob is the worst case for Redact: a 16 KiB base64 blob,
// one run of word characters, where no form can be skipped.
func BenchmarkRedactBlob(b *testing.B) {
	vals := make([]string, 10)
	for i := range vals {
		vals[i] = fmt.Sprintf("secret-value-%02d-Zq8LmT4vRx", i)
	}
	set := New(vals...)
	raw := make([]byte, 12<<10)
	for i := range raw {
		raw[i] = byte(i * 7919 >> 3)
	}
	text := base64.StdEncoding.EncodeToString(raw)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		set.Redact(text)
	}
}
