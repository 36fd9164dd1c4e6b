package metrics

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// writeProcess writes the process's metrics under the names of the
// Prometheus process collector (and, for memory, threads and I/O, of
// the VictoriaMetrics library's, which /metrics showed before), read at
// the scrape: CPU and page faults from getrusage, memory and threads from
// /proc/self/status, I/O from /proc/self/io, file descriptors from
// /proc/self/fd and RLIMIT_NOFILE. A file that cannot be read (a
// restricted /proc) leaves its families out.
func writeProcess(t *text) {
	var ss []sample
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		user, sys := tv(ru.Utime), tv(ru.Stime)
		ss = append(ss,
			sample{"process_cpu_seconds_total", kindCounter, "Total user and system CPU time spent in seconds.", user + sys},
			sample{"process_cpu_seconds_user_total", kindCounter, "User CPU time spent in seconds.", user},
			sample{"process_cpu_seconds_system_total", kindCounter, "System CPU time spent in seconds.", sys},
			sample{"process_minor_pagefaults_total", kindCounter, "Page faults served without disk I/O.", float64(ru.Minflt)},
			sample{"process_major_pagefaults_total", kindCounter, "Page faults that needed disk I/O.", float64(ru.Majflt)},
		)
	}
	ss = append(ss, sample{"process_start_time_seconds", kindGauge, "Start time of the process since the Unix epoch in seconds.",
		float64(started.UnixNano()) / 1e9})
	ss = append(ss, procFields("/proc/self/status", 1024, []procField{
		{"VmRSS:", "process_resident_memory_bytes", kindGauge, "Resident memory size in bytes."},
		{"VmHWM:", "process_resident_memory_peak_bytes", kindGauge, "Peak resident memory size in bytes."},
		{"RssAnon:", "process_resident_memory_anon_bytes", kindGauge, "Resident anonymous memory (heap, stacks) in bytes."},
		{"RssFile:", "process_resident_memory_file_bytes", kindGauge, "Resident file-backed memory (the binary's pages) in bytes."},
		{"RssShmem:", "process_resident_memory_shared_bytes", kindGauge, "Resident shared memory in bytes."},
		{"VmSize:", "process_virtual_memory_bytes", kindGauge, "Virtual memory size in bytes."},
		{"VmPeak:", "process_virtual_memory_peak_bytes", kindGauge, "Peak virtual memory size in bytes."},
		{"Threads:", "process_num_threads", kindGauge, "Number of OS threads in the process."},
	})...)
	ss = append(ss, procFields("/proc/self/io", 1, []procField{
		{"rchar:", "process_io_read_bytes_total", kindCounter, "Bytes read by read-like system calls."},
		{"wchar:", "process_io_written_bytes_total", kindCounter, "Bytes written by write-like system calls."},
		{"syscr:", "process_io_read_syscalls_total", kindCounter, "Read-like system calls."},
		{"syscw:", "process_io_write_syscalls_total", kindCounter, "Write-like system calls."},
		{"read_bytes:", "process_io_storage_read_bytes_total", kindCounter, "Bytes read from storage."},
		{"write_bytes:", "process_io_storage_written_bytes_total", kindCounter, "Bytes written to storage."},
	})...)
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		ss = append(ss, sample{"process_open_fds", kindGauge, "Number of open file descriptors.", float64(len(fds))})
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		ss = append(ss, sample{"process_max_fds", kindGauge, "Maximum number of open file descriptors.", float64(lim.Cur)})
	}
	writeSamples(t, ss)
}

// tv is a timeval in seconds.
func tv(v syscall.Timeval) float64 { return float64(v.Sec) + float64(v.Usec)/1e6 }

// procField is a "key: value" line of a /proc file and the sample it
// becomes.
type procField struct {
	key, name string
	k         kind
	help      string
}

// procFields reads file and returns the samples of fields found in it,
// each value times unit (1024 for /proc/self/status's kB).
func procFields(file string, unit float64, fields []procField) []sample {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var ss []sample
	for _, f := range fields {
		i := bytes.Index(data, []byte("\n"+f.key))
		if i < 0 && !bytes.HasPrefix(data, []byte(f.key)) {
			continue
		}
		rest := data[i+1+len(f.key):]
		if end := bytes.IndexByte(rest, '\n'); end >= 0 {
			rest = rest[:end]
		}
		num, _, _ := bytes.Cut(bytes.TrimSpace(rest), []byte(" "))
		v, err := strconv.ParseUint(string(num), 10, 64)
		if err != nil {
			continue
		}
		ss = append(ss, sample{f.name, f.k, f.help, float64(v) * unit})
	}
	return ss
}
