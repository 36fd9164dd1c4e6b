package main

import "testing"

// TestParseFaults reads minflt, field 10 of /proc/<pid>/stat, counting
// from the last ')' (a command name may hold spaces and parentheses).
func TestParseFaults(t *testing.T) {
	stat := "4242 (bot (x) y) S 1 4242 4242 0 -1 4194560 900 0 0 0 150 50 0 0 20 0 7 0 100 1000000 3000"
	if n, err := parseFaults(stat); err != nil || n != 900 {
		t.Errorf("parseFaults = %d, %v; want 900", n, err)
	}
	for _, bad := range []string{"4242 bot S", "4242 (bot) S 1 2"} {
		if _, err := parseFaults(bad); err == nil {
			t.Errorf("parseFaults(%q): no error", bad)
		}
	}
}
