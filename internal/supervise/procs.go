package supervise

import (
	"bytes"
	"os"
	"strconv"
)

// Descendants lists the processes below pid (children, their children…)
// from /proc. It is a snapshot: processes come and go while it reads.
func Descendants(pid int) []int {
	children := make(map[int][]int)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := parentOf(p); ok {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentOf reads a process's parent from /proc/<pid>/stat, whose second
// field (the command name, in parentheses) may itself hold spaces and
// parentheses: the fields after the last ')' are unambiguous.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	fields := bytes.Fields(b[i+1:]) // state, ppid, …
	if len(fields) < 2 {
		return 0, false
	}
	pp, err := strconv.Atoi(string(fields[1]))
	return pp, err == nil
}
