//go:build !linux

package main

// hardenProcess does nothing here: PR_SET_DUMPABLE is Linux's.
func hardenProcess() {}
