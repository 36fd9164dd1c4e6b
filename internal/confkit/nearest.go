package confkit

// Nearest returns the word of known closest to word by edit distance, when
// it is close enough to be the word meant: at most two edits, and at most
// one edit for every three characters of word ("lm" → "llm", "max_step" →
// "max_steps", but nothing for "foo"). An exact match is not a
// suggestion.
func Nearest(word string, known []string) (string, bool) {
	best, bestD := "", -1
	for _, k := range known {
		if d := editDistance(word, k); d > 0 && (bestD < 0 || d < bestD) {
			best, bestD = k, d
		}
	}
	if bestD < 0 || bestD > min(2, max(1, len(word)/3)) {
		return "", false
	}
	return best, true
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours cost one
// each. (core's near-miss commands use the same measure.)
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
