//go:build gatehouse_pprof

package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfile writes a CPU profile of the whole run to the file named by
// GATEHOUSE_CPUPROFILE, when set, and a heap profile (allocations since
// the start) at the end to the file named by GATEHOUSE_MEMPROFILE. It is compiled in only with the build tag
// gatehouse_pprof (gatehouse-bench -cpuprofile builds that way), so the
// shipped binary carries neither runtime/pprof nor this switch. The
// returned function ends the profile; main calls it before exiting.
func startProfile() (stop func()) {
	if os.Getenv("GATEHOUSE_MEMPROFILE") != "" {
		runtime.MemProfileRate = 4096
	}
	stopCPU := startCPUProfile()
	return func() {
		stopCPU()
		writeHeapProfile()
	}
}

// writeHeapProfile writes the heap profile to GATEHOUSE_MEMPROFILE, when set.
func writeHeapProfile() {
	path := os.Getenv("GATEHOUSE_MEMPROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bot: heap profile: %v\n", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		fmt.Fprintf(os.Stderr, "bot: heap profile: %v\n", err)
	}
}

// startCPUProfile starts the CPU profile GATEHOUSE_CPUPROFILE names.
func startCPUProfile() (stop func()) {
	path := os.Getenv("GATEHOUSE_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bot: cpu profile: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "bot: cpu profile: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "bot: cpu profile: %v\n", err)
		}
	}
}
