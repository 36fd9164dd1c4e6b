//go:build gatehouse_pprof

package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile of the whole run to the file named by
// GATEHOUSE_CPUPROFILE, when set. It is compiled in only with the build tag
// gatehouse_pprof (gatehouse-bench -cpuprofile builds that way), so the
// shipped binary carries neither runtime/pprof nor this switch. The
// returned function ends the profile; main calls it before exiting.
func startProfile() (stop func()) {
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
