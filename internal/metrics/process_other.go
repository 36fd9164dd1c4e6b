//go:build !linux

package metrics

// writeProcess writes the process's start time; the other process
// metrics are read from Linux's /proc and getrusage (process_linux.go).
func writeProcess(t *text) {
	writeSamples(t, []sample{{"process_start_time_seconds", kindGauge, "Start time of the process since the Unix epoch in seconds.",
		float64(started.UnixNano()) / 1e9}})
}
