package hitl

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// applyHunks applies a unified diff's hunks to old, checking every kept
// and deleted line against it, as patch(1) would; it is how the tests know
// a diff says what changed.
func applyHunks(old, hunks string) (string, error) {
	src := splitLines(old)
	var out []string
	pos := 0 // next line of src not yet copied
	lines := splitLines(hunks)
	for n := 0; n < len(lines); {
		h := lines[n]
		var oldStart, oldLen, newStart, newLen int
		if err := parseHunkHeader(h, &oldStart, &oldLen, &newStart, &newLen); err != nil {
			return "", fmt.Errorf("line %d: %w", n+1, err)
		}
		n++
		start := oldStart - 1
		if oldLen == 0 {
			start = oldStart
		}
		if start < pos || start > len(src) {
			return "", fmt.Errorf("hunk %q out of order", h)
		}
		out = append(out, src[pos:start]...)
		pos = start
		var gotOld, gotNew int
		for n < len(lines) && !strings.HasPrefix(lines[n], "@@") {
			l := lines[n]
			n++
			text := l[1:]
			if n < len(lines) && lines[n] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				n++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(src) || src[pos] != text {
					return "", fmt.Errorf("hunk %q: line %d is %q, diff says %q", h, pos+1, at(src, pos), text)
				}
				pos++
				gotOld++
				if l[0] == ' ' {
					out = append(out, text)
					gotNew++
				}
			case '+':
				out = append(out, text)
				gotNew++
			default:
				return "", fmt.Errorf("bad diff line %q", l)
			}
		}
		if gotOld != oldLen || gotNew != newLen {
			return "", fmt.Errorf("hunk %q has %d/%d lines", h, gotOld, gotNew)
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, ""), nil
}

func at(ls []string, i int) string {
	if i < len(ls) {
		return ls[i]
	}
	return "<end>"
}

func parseHunkHeader(h string, os, ol, ns, nl *int) error {
	var o, n string
	if _, err := fmt.Sscanf(h, "@@ -%s +%s @@\n", &o, &n); err != nil {
		return fmt.Errorf("header %q: %w", h, err)
	}
	side := func(s string, start, length *int) error {
		a, b, ok := strings.Cut(s, ",")
		*length = 1
		var err error
		if *start, err = strconv.Atoi(a); err != nil {
			return err
		}
		if ok {
			*length, err = strconv.Atoi(b)
		}
		return err
	}
	if err := side(o, os, ol); err != nil {
		return err
	}
	return side(n, ns, nl)
}

func numbered(n int, change map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := change[i]; ok {
			b.WriteString(s)
			continue
		}
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestUnifiedDiff(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		added, deleted int
		hunks          string // "" to skip the exact check
	}{
		{name: "equal", old: "a\nb\n", new: "a\nb\n"},
		{name: "both empty"},
		{name: "new file", new: "a\nb\n", added: 2, hunks: "@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{name: "emptied", old: "a\n", deleted: 1, hunks: "@@ -1 +0,0 @@\n-a\n"},
		{name: "one line changed", old: "a\nb\nc\n", new: "a\nB\nc\n", added: 1, deleted: 1,
			hunks: "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{name: "no newline at end", old: "a\nb", new: "a\nb\n", added: 1, deleted: 1,
			hunks: "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{name: "three of 200, far apart",
			old: numbered(200, nil), new: numbered(200, map[int]string{10: "ten\n", 100: "hundred\n", 190: "x\n"}),
			added: 3, deleted: 3},
		{name: "two close changes share a hunk",
			old: numbered(20, nil), new: numbered(20, map[int]string{5: "five\n", 9: "nine\n"}), added: 2, deleted: 2,
			hunks: "@@ -2,11 +2,11 @@\n line 2\n line 3\n line 4\n-line 5\n+five\n line 6\n line 7\n line 8\n-line 9\n+nine\n line 10\n line 11\n line 12\n"},
		{name: "insert in the middle", old: "a\nc\n", new: "a\nb\nc\n", added: 1, hunks: "@@ -1,2 +1,3 @@\n a\n+b\n c\n"},
		{name: "crlf lines differ", old: "a\r\nb\r\n", new: "a\nb\r\n", added: 1, deleted: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := unifiedDiff(tc.old, tc.new)
			if !ok {
				t.Fatal("not diffed")
			}
			if d.Added != tc.added || d.Deleted != tc.deleted {
				t.Errorf("+%d −%d, want +%d −%d\n%s", d.Added, d.Deleted, tc.added, tc.deleted, d.Hunks)
			}
			if tc.hunks != "" && d.Hunks != tc.hunks {
				t.Errorf("hunks:\n%s\nwant:\n%s", d.Hunks, tc.hunks)
			}
			got, err := applyHunks(tc.old, d.Hunks)
			if err != nil || got != tc.new {
				t.Errorf("applying the diff: %v\ngot  %q\nwant %q\n%s", err, got, tc.new, d.Hunks)
			}
		})
	}
}

// TestUnifiedDiffThreeHunks: three changes far apart in 200 lines are three
// hunks with three lines of context each.
func TestUnifiedDiffThreeHunks(t *testing.T) {
	d, _ := unifiedDiff(numbered(200, nil), numbered(200, map[int]string{10: "ten\n", 100: "hundred\n", 190: "x\n"}))
	if n := strings.Count(d.Hunks, "@@ -"); n != 3 {
		t.Fatalf("%d hunks:\n%s", n, d.Hunks)
	}
	if !strings.HasPrefix(d.Hunks, "@@ -7,7 +7,7 @@\n line 7\n") {
		t.Errorf("first hunk:\n%s", d.Hunks)
	}
}

// TestUnifiedDiffBounds: past maxDiffLines lines or maxDiffEdits changed
// lines no diff is computed.
func TestUnifiedDiffBounds(t *testing.T) {
	if _, ok := unifiedDiff("", strings.Repeat("x\n", maxDiffLines+1)); ok {
		t.Error("a text over maxDiffLines was diffed")
	}
	var a, b strings.Builder
	for i := range maxDiffEdits/2 + 1 {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	if _, ok := unifiedDiff(a.String(), b.String()); ok {
		t.Error("texts differing in more than maxDiffEdits lines were diffed")
	}
	if d, ok := unifiedDiff(a.String()+"same\n", "same\n"+a.String()); !ok || d.Added != 1 || d.Deleted != 1 {
		t.Errorf("a move of one line: +%d −%d ok=%v", d.Added, d.Deleted, ok)
	}
}

// FuzzUnifiedDiff: whatever the two texts (they come from the model and
// from files), the diff applies to the old text and gives the new one, and
// its counts are its lines.
func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("", "x")
	f.Add("x\ny", "y\nx")
	f.Add("@@ -1 +1 @@\n", "\\ No newline at end of file\n")
	f.Add("a\r\nb\n\n\n", "\n\na\r\n")
	f.Fuzz(func(t *testing.T, old, new string) {
		d, ok := unifiedDiff(old, new)
		if !ok {
			return
		}
		got, err := applyHunks(old, d.Hunks)
		if err != nil || got != new {
			t.Fatalf("applying: %v\nold %q\nnew %q\ngot %q\n%s", err, old, new, got, d.Hunks)
		}
		if p := strings.Count("\n"+d.Hunks, "\n+"); p != d.Added {
			t.Fatalf("Added %d, %d lines", d.Added, p)
		}
		if (old == new) != (d.Hunks == "") {
			t.Fatalf("old == new is %v, hunks %q", old == new, d.Hunks)
		}
	})
}
