package textutil

// Byte classes for Shape, the characters of ids, names and tokens.
const (
	// Digits are 0-9.
	Digits = "0123456789"
	// Alnum are ASCII letters and digits.
	Alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" + Digits
	// Word are ASCII letters, digits, '_' and '-': what chat platforms and
	// OpenAI-compatible APIs accept in ids, tokens and function names.
	Word = Alnum + "_-"
)

// Shape reports whether s is min to max bytes long and every byte is one
// of allowed. It replaces a regexp such as ^[A-Za-z0-9_-]{1,64}$, whose
// bounded repetition compiles to a program with one instruction per
// repeat, built and held in memory at start-up.
func Shape(s string, min, max int, allowed string) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := range len(s) {
		if !inSet(s[i], allowed) {
			return false
		}
	}
	return true
}

// inSet reports whether b is one of the bytes of set.
func inSet(b byte, set string) bool {
	for i := range len(set) {
		if set[i] == b {
			return true
		}
	}
	return false
}
