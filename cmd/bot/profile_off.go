//go:build !gatehouse_pprof

package main

// startProfile does nothing: CPU profiling is compiled in only with the
// build tag gatehouse_pprof (see profile_on.go).
func startProfile() (stop func()) { return func() {} }
