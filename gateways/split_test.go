package gateways

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestUTF16Len(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"é", 1},
		{"😀", 2},
		{"a😀b", 4},
		{"\xff", 1},
	} {
		if got := UTF16Len(tc.in); got != tc.want {
			t.Errorf("UTF16Len(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		text  string
		limit int
		want  []string
	}{
		{"empty", "", 10, nil},
		{"fits", "hello", 10, []string{"hello"}},
		{"paragraph before line", "aaaa\nbbbb\n\ncccc", 12, []string{"aaaa\nbbbb\n\n", "cccc"}},
		{"line when no paragraph fits", "aaaa\nbbbb\ncccc", 10, []string{"aaaa\nbbbb\n", "cccc"}},
		{"word when no line fits", "aaa bbb ccc", 8, []string{"aaa bbb ", "ccc"}},
		{"hard cut", "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"blank run stays with the earlier chunk", "aaaa\n\n\n\nbbbb", 9, []string{"aaaa\n\n\n\n", "bbbb"}},
		{"cut before a code block", "intro\n```\ncode\n```\n", 16, []string{"intro\n", "```\ncode\n```\n"}},
		{
			"code block reopened with its language",
			"```go\nline1\nline2\nline3\n```",
			24,
			[]string{"```go\nline1\nline2\n```", "```go\nline3\n```"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Split(tc.text, tc.limit, utf8.RuneCountInString)
			if !equalStrings(got, tc.want) {
				t.Fatalf("Split(%q, %d) =\n%q\nwant\n%q", tc.text, tc.limit, got, tc.want)
			}
		})
	}
}

func TestSplitUTF16(t *testing.T) {
	text := strings.Repeat("😀", 10) // 20 UTF-16 units
	got := Split(text, 6, UTF16Len)
	if strings.Join(got, "") != text {
		t.Fatalf("lost text: %q", got)
	}
	for _, c := range got {
		if UTF16Len(c) > 6 || !utf8.ValidString(c) {
			t.Fatalf("bad chunk %q", c)
		}
	}
	if len(got) != 4 {
		t.Fatalf("got %d chunks, want 4", len(got))
	}
}

func TestSplitLongCodeBlockKeepsEveryLine(t *testing.T) {
	var b strings.Builder
	b.WriteString("Here is the file:\n\n```python\n")
	for i := range 200 {
		b.WriteString("print('line ")
		b.WriteString(strings.Repeat("x", i%17))
		b.WriteString("')\n")
	}
	b.WriteString("```\n\nDone.")
	text := b.String()
	chunks := Split(text, 500, UTF16Len)
	for i, c := range chunks {
		if UTF16Len(c) > 500 {
			t.Fatalf("chunk %d too long: %d", i, UTF16Len(c))
		}
		if strings.Count(c, "```")%2 != 0 {
			t.Fatalf("chunk %d has an unbalanced fence:\n%s", i, c)
		}
		if i > 0 && strings.Contains(c, "print(") && !strings.HasPrefix(c, "```python\n") {
			t.Fatalf("chunk %d does not reopen the block:\n%s", i, c)
		}
	}
	if got, want := countLines(chunks, "print("), 200; got != want {
		t.Fatalf("%d code lines survived, want %d", got, want)
	}
}

func countLines(chunks []string, prefix string) int {
	n := 0
	for _, c := range chunks {
		for _, l := range strings.Split(c, "\n") {
			if strings.HasPrefix(l, prefix) {
				n++
			}
		}
	}
	return n
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzSplit checks Split's invariants on any input: no panic, every chunk
// within the limit, the chunk bodies concatenating to the text, and, for text
// without fences, the chunks themselves concatenating to it.
func FuzzSplit(f *testing.F) {
	f.Add("hello world", 5)
	f.Add("a\n\nb\nc d e", 3)
	f.Add("```go\nfunc main() {}\n```\n\ntext after", 12)
	f.Add("x ```` y\n````\n```\n````", 9)
	f.Add("😀😀 😀\n\n😀", 4)
	f.Add("\xff\xfe ab", 4)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if limit < 4 || limit > 1<<12 {
			t.Skip()
		}
		for _, measure := range []func(string) int{UTF16Len, func(s string) int { return len(s) }} {
			checkSplit(t, text, limit, measure)
		}
	})
}

func checkSplit(t *testing.T, text string, limit int, measure func(string) int) {
	pieces := splitPieces(text, limit, measure)
	var bodies strings.Builder
	for _, p := range pieces {
		if p.body == "" {
			t.Fatalf("empty piece in %q", text)
		}
		bodies.WriteString(p.body)
		if m := measure(p.render()); m > limit {
			t.Fatalf("chunk %q measures %d > %d", p.render(), m, limit)
		}
	}
	if bodies.String() != text {
		t.Fatalf("bodies %q do not concatenate to %q", bodies.String(), text)
	}
	if !strings.Contains(text, "```") && strings.Join(Split(text, limit, measure), "") != text {
		t.Fatalf("chunks do not concatenate to %q", text)
	}
}
