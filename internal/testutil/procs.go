package testutil

import (
	"bytes"
	"os"
	"strconv"
)

// ProcsWithEnv lists the live processes whose environment holds the
// variable assignment kv (e.g. "GH_MARK=abc"): the processes a test
// started, found again through /proc however they were reparented. A
// zombie has no environment left and is not listed.
func ProcsWithEnv(kv string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, v := range bytes.Split(env, []byte{0}) {
			if string(v) == kv {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}
