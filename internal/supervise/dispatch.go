package supervise

import "os"

// init turns the process into a supervisor when it was started as one
// (Arg first), before main or TestMain runs. This is the code base's one
// init with an effect, on purpose: the supervisor is this binary
// re-executed, and every binary that can start one links this package —
// the bot, but also the test binary of every package whose tests run the
// shell tool. A dispatch written in each main and TestMain is easy to
// forget, and a test binary without it, given Arg, runs its own tests
// again, recursively.
func init() {
	if len(os.Args) > 1 && os.Args[1] == Arg {
		os.Exit(Main(os.Args[2:]))
	}
}
