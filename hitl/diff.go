package hitl

import (
	"fmt"
	"strings"
)

// Bounds of a line diff. Both texts come from outside (the model's new
// content, the file as it is): past these the diff is not computed and the
// request says so.
const (
	maxDiffLines = 20000 // lines of either text
	maxDiffEdits = 2000  // lines added plus lines deleted (Myers' D)
	diffContext  = 3     // unchanged lines around each change
)

// lineDiff is a unified diff of two texts, line by line.
type lineDiff struct {
	// Hunks is the diff's hunks in unified form ("@@ -a,b +c,d @@" and
	// their lines), without the "---"/"+++" lines; "" when the texts are
	// equal.
	Hunks string
	// Added and Deleted count the lines added and deleted.
	Added, Deleted int
}

// edit is one line of a diff script: kept (' '), deleted ('-') or added ('+').
type edit struct {
	op   byte
	line string // with its "\n", if it has one
}

// unifiedDiff returns the unified diff of old and new. ok is false when
// either text has more than maxDiffLines lines or they differ by more than
// maxDiffEdits lines: the work would not be bounded.
func unifiedDiff(old, new string) (d lineDiff, ok bool) {
	a, b := splitLines(old), splitLines(new)
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		return lineDiff{}, false
	}
	script, ok := diffScript(a, b, maxDiffEdits)
	if !ok {
		return lineDiff{}, false
	}
	for _, e := range script {
		switch e.op {
		case '+':
			d.Added++
		case '-':
			d.Deleted++
		}
	}
	d.Hunks = formatHunks(script, diffContext)
	return d, true
}

// splitLines cuts s into lines, each with its "\n"; a last line without
// one is kept as it is. An empty s has no lines.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// diffScript returns a shortest edit script turning a into b (Myers' O(ND)
// algorithm, after the common head and tail are set aside), or false when
// it needs more than maxEdits deletions and additions.
func diffScript(a, b []string, maxEdits int) ([]edit, bool) {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	mid, ok := myers(a[head:len(a)-tail], b[head:len(b)-tail], maxEdits)
	if !ok {
		return nil, false
	}
	script := make([]edit, 0, head+len(mid)+tail)
	for _, l := range a[:head] {
		script = append(script, edit{' ', l})
	}
	script = append(script, mid...)
	for _, l := range a[len(a)-tail:] {
		script = append(script, edit{' ', l})
	}
	return script, true
}

// myers is Myers' greedy shortest edit script of a into b, giving up past
// maxEdits. It keeps the furthest-reaching paths of each D (about
// maxEdits² int32s) to walk the script back.
func myers(a, b []string, maxEdits int) ([]edit, bool) {
	n, m := len(a), len(b)
	if n+m == 0 {
		return nil, true
	}
	if n+m > maxEdits && (n == 0 || m == 0) {
		return nil, false
	}
	// Lines as numbers: comparing ints beats comparing strings.
	ids := make(map[string]int, n+m)
	num := func(ls []string) []int {
		out := make([]int, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := num(a), num(b)
	limit := min(n+m, maxEdits)
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int32 // trace[d] is v over k in [-d, d] before step d
	for d := 0; d <= limit; d++ {
		row := make([]int32, 2*d+1)
		for i, x := range v[off-d : off+d+1] {
			row[i] = int32(x)
		}
		trace = append(trace, row)
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				i = v[off+k+1] // down: an addition
			} else {
				i = v[off+k-1] + 1 // right: a deletion
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i, j = i+1, j+1
			}
			v[off+k] = i
			if i >= n && j >= m {
				return backtrack(a, b, trace, d, k), true
			}
		}
	}
	return nil, false
}

// backtrack walks the paths myers kept back from (d, k) at the end of
// both texts and returns the edit script, first edit first.
func backtrack(a, b []string, trace [][]int32, d, k int) []edit {
	var rev []edit
	i, j := len(a), len(b)
	for ; d > 0; d-- {
		v := trace[d]
		at := func(k int) int { return int(v[k+d]) } // diagonal k after step d-1
		down := k == -d || (k != d && at(k-1) < at(k+1))
		pk := k - 1
		if down {
			pk = k + 1
		}
		// The move of step d leads from diagonal pk to (mi, mj) on k;
		// a snake of kept lines follows to (i, j).
		mi := at(pk)
		if !down {
			mi++
		}
		for i > mi {
			i, j = i-1, j-1
			rev = append(rev, edit{' ', a[i]})
		}
		if down {
			j--
			rev = append(rev, edit{'+', b[j]})
		} else {
			i--
			rev = append(rev, edit{'-', a[i]})
		}
		k = pk
	}
	for i > 0 {
		i, j = i-1, j-1
		rev = append(rev, edit{' ', a[i]})
	}
	out := make([]edit, len(rev))
	for n, e := range rev {
		out[len(rev)-1-n] = e
	}
	return out
}

// formatHunks writes script as unified hunks with ctx lines of context.
func formatHunks(script []edit, ctx int) string {
	var b strings.Builder
	for start := 0; start < len(script); {
		// The next change, and the hunk around it.
		first := start
		for first < len(script) && script[first].op == ' ' {
			first++
		}
		if first == len(script) {
			break
		}
		lo := max(first-ctx, start)
		hi := first // one past the hunk's last change
		for i := first; i < len(script); i++ {
			if script[i].op != ' ' {
				hi = i + 1
			} else if i-hi >= 2*ctx {
				break
			}
		}
		end := min(hi+ctx, len(script))
		writeHunk(&b, script, lo, end)
		start = end
	}
	return b.String()
}

// writeHunk writes script[lo:end] as one hunk, its header counting lines
// from the start of script.
func writeHunk(b *strings.Builder, script []edit, lo, end int) {
	oldLine, newLine := 1, 1
	for _, e := range script[:lo] {
		if e.op != '+' {
			oldLine++
		}
		if e.op != '-' {
			newLine++
		}
	}
	var oldN, newN int
	for _, e := range script[lo:end] {
		if e.op != '+' {
			oldN++
		}
		if e.op != '-' {
			newN++
		}
	}
	fmt.Fprintf(b, "@@ -%s +%s @@\n", hunkRange(oldLine, oldN), hunkRange(newLine, newN))
	for _, e := range script[lo:end] {
		b.WriteByte(e.op)
		b.WriteString(e.line)
		if !strings.HasSuffix(e.line, "\n") {
			b.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange is one side of a hunk header as GNU diff writes it: "l" for
// one line, "l,n" otherwise, and for no lines the line before them.
func hunkRange(line, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", line-1)
	case 1:
		return fmt.Sprint(line)
	}
	return fmt.Sprintf("%d,%d", line, n)
}
