package main

import "runtime"

// oneProc is how many threads run the bot's Go code at once unless
// GOMAXPROCS says otherwise: one. The bot mostly waits (for the platforms,
// the model, the disk); its own work is about a millisecond a message.
// With a thread per core, each goroutine woken while another thread was
// idle woke that thread too, only for it to find the work taken: on a
// 2-core VM those thread switches were a quarter of the CPU per message,
// and one thread used about 10 % less in the bench's burst (median of 7
// interleaved bursts each: 1.23 against 1.38 ms a message). The tools the
// bot runs are processes of their own, not limited by it.
const oneProc = 1

// limitProcs sets GOMAXPROCS to oneProc unless the environment sets it
// (getenv is os.Getenv). It returns the value it set, 0 when it left the
// runtime's choice.
func limitProcs(getenv func(string) string) int {
	if getenv("GOMAXPROCS") != "" {
		return 0
	}
	runtime.GOMAXPROCS(oneProc)
	return oneProc
}
