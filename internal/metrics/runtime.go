package metrics

import (
	"runtime"
	"runtime/debug"
	"time"
)

// started is when this package was initialised, a few milliseconds after
// the process started: process_start_time_seconds.
var started = time.Now()

// sample is one gauge or counter of the Go runtime or the process: its
// family, its TYPE and HELP, and its value.
type sample struct {
	name string
	k    kind
	help string
	v    float64
}

// writeSamples writes each sample as a family of one series.
func writeSamples(t *text, ss []sample) {
	for _, s := range ss {
		t.family(s.name, s.k, s.help)
		t.float(s.name, "", s.v)
	}
}

// writeRuntime writes the Go runtime's metrics under the names of the
// Prometheus Go collector (go_goroutines, go_threads, go_memstats_*,
// go_gc_duration_seconds, …), read at the scrape from runtime.ReadMemStats
// and debug.ReadGCStats; not from runtime/metrics, whose initialisation
// alone cost 1.2 ms of every start.
func writeRuntime(t *text) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	threads, _ := runtime.ThreadCreateProfile(nil)
	writeSamples(t, []sample{
		{"go_goroutines", kindGauge, "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())},
		{"go_threads", kindGauge, "Number of OS threads created.", float64(threads)},
		{"go_gomaxprocs", kindGauge, "The value of GOMAXPROCS: how many threads run Go code at once.", float64(runtime.GOMAXPROCS(0))},
		{"go_memlimit_bytes", kindGauge, "The Go runtime's soft memory limit (GOMEMLIMIT) in bytes.", float64(debug.SetMemoryLimit(-1))},
		// The library's go_cgo_calls_count, go_gc_forced_count and
		// go_cpu_count were gauges named like a summary's _count (promtool
		// check metrics refuses them): the first two are counters under
		// the Prometheus Go collector's names now, the third is left out.
		{"go_cgo_go_to_c_calls_calls_total", kindCounter, "Count of calls made from Go to C by the current process.", float64(runtime.NumCgoCall())},
		{"go_gc_cycles_forced_gc_cycles_total", kindCounter, "Count of completed GC cycles forced by the application (runtime.GC).", float64(ms.NumForcedGC)},
	})
	t.family("go_info", kindGauge, "Information about the Go environment.")
	t.float("go_info", labelSet("version", runtime.Version()), 1)
	writeMemStats(t, &ms)
	writeGCDuration(t)
}

// writeMemStats writes runtime.MemStats as the Go collector's
// go_memstats_* families.
func writeMemStats(t *text, ms *runtime.MemStats) {
	g := func(name, help string, v uint64) sample {
		return sample{"go_memstats_" + name, kindGauge, help, float64(v)}
	}
	c := func(name, help string, v uint64) sample {
		return sample{"go_memstats_" + name, kindCounter, help, float64(v)}
	}
	writeSamples(t, []sample{
		g("alloc_bytes", "Bytes of allocated heap objects.", ms.Alloc),
		c("alloc_bytes_total", "Total bytes allocated for heap objects, even if freed.", ms.TotalAlloc),
		g("buck_hash_sys_bytes", "Bytes used by the profiling bucket hash table.", ms.BuckHashSys),
		c("frees_total", "Total number of heap objects freed.", ms.Frees),
		{"go_memstats_gc_cpu_fraction", kindGauge, "Fraction of the program's CPU time used by the garbage collector since the program started.", ms.GCCPUFraction},
		g("gc_sys_bytes", "Bytes of memory in garbage collection metadata.", ms.GCSys),
		g("heap_alloc_bytes", "Bytes of allocated heap objects.", ms.HeapAlloc),
		g("heap_idle_bytes", "Bytes in idle (unused) heap spans.", ms.HeapIdle),
		g("heap_inuse_bytes", "Bytes in in-use heap spans.", ms.HeapInuse),
		g("heap_objects", "Number of allocated heap objects.", ms.HeapObjects),
		g("heap_released_bytes", "Bytes of physical memory returned to the OS.", ms.HeapReleased),
		g("heap_sys_bytes", "Bytes of heap memory obtained from the OS.", ms.HeapSys),
		{"go_memstats_last_gc_time_seconds", kindGauge, "Unix time of the last garbage collection in seconds.", float64(ms.LastGC) / 1e9},
		c("lookups_total", "Total number of pointer lookups performed by the runtime.", ms.Lookups),
		c("mallocs_total", "Total number of heap objects allocated.", ms.Mallocs),
		g("mcache_inuse_bytes", "Bytes of allocated mcache structures.", ms.MCacheInuse),
		g("mcache_sys_bytes", "Bytes of memory obtained from the OS for mcache structures.", ms.MCacheSys),
		g("mspan_inuse_bytes", "Bytes of allocated mspan structures.", ms.MSpanInuse),
		g("mspan_sys_bytes", "Bytes of memory obtained from the OS for mspan structures.", ms.MSpanSys),
		g("next_gc_bytes", "Target heap size of the next garbage collection.", ms.NextGC),
		g("other_sys_bytes", "Bytes of memory in miscellaneous off-heap runtime allocations.", ms.OtherSys),
		g("stack_inuse_bytes", "Bytes in stack spans.", ms.StackInuse),
		g("stack_sys_bytes", "Bytes of stack memory obtained from the OS.", ms.StackSys),
		g("sys_bytes", "Total bytes of memory obtained from the OS.", ms.Sys),
	})
}

// writeGCDuration writes go_gc_duration_seconds, the Go collector's
// summary of the garbage collector's pauses: quantiles 0, 0.25, 0.5,
// 0.75 and 1 of the recent pauses, their total and their number.
func writeGCDuration(t *text) {
	gc := debug.GCStats{PauseQuantiles: make([]time.Duration, 5)}
	debug.ReadGCStats(&gc)
	const name = "go_gc_duration_seconds"
	t.family(name, kindSummary, "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.")
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		t.float(name, `{quantile="`+q+`"}`, gc.PauseQuantiles[i].Seconds())
	}
	t.float(name+"_sum", "", gc.PauseTotal.Seconds())
	t.uint(name+"_count", "", uint64(gc.NumGC))
}
