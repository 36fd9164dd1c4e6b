package startup

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// minorFaults is the process's minor page faults so far (all threads).
func minorFaults() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Minflt) // int32 on 32-bit Linux
}

// mainThreadTime is how long the main thread has run or waited to run
// since exec (/proc/self/schedstat: its time on a CPU and in the run
// queue, in nanoseconds). Before main the thread does not sleep, so at
// main it is the time since exec.
func mainThreadTime() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/self/schedstat")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	run, err1 := strconv.ParseInt(f[0], 10, 64)
	wait, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(run + wait), true
}
