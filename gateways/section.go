package gateways

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/internal/confkit"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// Section is a gateway's configuration section together with what the
// rest of the bot asks of the gateway: doctor's lines, start-up warnings
// and its constructor. Each gateway package defines one; the gateway table
// (app/gatewaytable) lists them.
type Section interface {
	confkit.Section
	// Doctor says, offline, what the gateway will do as configured.
	Doctor() Status
	// Warnings are lines logged at start-up, such as a configured gateway
	// this version cannot run.
	Warnings() []string
	// Build constructs the gateway from the section. It returns nil and no
	// error when the gateway does not run (disabled, no adapter in this
	// version, no terminal). Errors name the configuration key at fault.
	Build(ctx context.Context, d Deps) (Gateway, error)
}

// Preparer is a Section whose Build waits on its platform (a "who am I"
// request that checks the credentials). Prepare starts that request in
// the background and returns the section to build instead, whose Build
// waits for the answer: the app prepares before it opens the store, so
// the request overlaps the rest of the start-up, and a refused credential
// still fails the build. d holds only Log, HTTPClient, Tune and
// MaxAttachment; ctx bounds the request.
type Preparer interface {
	Prepare(ctx context.Context, d Deps) Section
}

// OnlineDoctor is a Section that can ask its platform whether the
// configured credentials work (one cheap authenticated request, such as
// a "who am I" call). `bot doctor --online` calls it for each enabled section with
// Deps.HTTPClient set (bounded by a timeout) and nothing else. Status.Runs
// false marks the check failed; each line starts with the gateway's name,
// says the latency ("ok in 12ms", "failed after 3ms: …") and holds no
// secret and no unescaped platform text.
type OnlineDoctor interface {
	DoctorOnline(ctx context.Context, d Deps) Status
}

// Status is what `bot doctor` says about one gateway.
type Status struct {
	// Lines are doctor's lines for the gateway, each starting with its name.
	Lines []string
	// Runs is true when the gateway will run as configured.
	Runs bool
	// Problems are what stops an enabled gateway from running as
	// configured (a token of the wrong shape, or in the wrong key), each
	// naming its key; doctor reports each as a problem. They hold no
	// secret.
	Problems []string
}

// Deps are what a gateway's constructor may use besides its section.
type Deps struct {
	Log zerolog.Logger
	// Cursors persists positions (update offsets); nil keeps them in memory.
	Cursors Cursors
	// Parking keeps updates confirmed to the platform while their turn
	// ran, until done; nil keeps them in memory (a restart loses them).
	Parking Parking
	// Memory remembers keys across restarts (the Slack threads the bot is
	// part of); nil keeps them in memory.
	Memory Memory
	// Auth is the allow list as the engine applies it; nil treats every
	// sender as allowed (tests).
	Auth Admission
	// Approvals resolves button presses.
	Approvals Approvals
	// HTTPClient, when set, makes the platform API requests (tests).
	HTTPClient *http.Client
	// Stdin and Stdout are the bot's own terminal or pipes; Interactive is
	// true when they are a terminal.
	Stdin       io.Reader
	Stdout      io.Writer
	Interactive bool
	// HTTPListen is http.listen; Mount adds a handler to that server (a
	// webhook). Mount is nil when there is no such server.
	HTTPListen string
	Mount      func(pattern string, h http.Handler)
	// Tune, when set, is called with a pointer to a gateway's runtime
	// settings before it is built, to adjust what has no configuration key
	// (pacing, poll timeouts); tests use it.
	Tune func(settings any)
	// Metrics is the App's metric registry (nil records nothing). A
	// gateway takes its recorders from it by its name:
	// Metrics.Delivery(name) for OutboxConfig.Metrics, and
	// Metrics.Reconnects(name), a func to call each time it lost its
	// platform connection and tries again (a failed poll, a dropped
	// websocket session) — gatehouse_gateway_reconnects_total{gateway}.
	Metrics *metrics.Registry
	// MaxAttachment is attachments.max_bytes: a gateway that picks among
	// sizes of one file (a photo sent in several sizes) takes the largest
	// within it; 0 leaves the gateway's default.
	MaxAttachment int64

	// Lease, when set, is how a receiver the platform allows once per token
	// (a long poll for updates) runs when several instances share the store:
	// under a lease (RunUnderLease). Nil when the store is not shared (one
	// process: SQLite's lock file already makes it the only one).
	Lease *LeaseConfig
	// Shared, when set, is what a gateway's Outbox shares with the other
	// instances on the store (OutboxConfig.Shared): send slots, so that
	// the platform's limits per token hold for all of them together, and
	// the outbox of replies. Nil when the store is not shared.
	Shared *Shared
}

// LeaseConfig is this instance's part in the leases of receivers.
type LeaseConfig struct {
	Leaser Leaser
	Holder string        // this instance's name
	TTL    time.Duration // how long a dead holder's lease waits before another takes it
}

// TerminalUser is a Section whose gateway talks on the bot's own stdin and
// stdout; the bot then keeps its log quiet on a terminal.
type TerminalUser interface {
	UsesTerminal() bool
}

// InputEnder is a Gateway whose input can end for good (the end of piped
// input, Ctrl-D). When it is the only gateway, the bot stops once its input
// has ended and been answered.
type InputEnder interface {
	EndOfInput() <-chan struct{}
}

// WhoMayTalk describes an allow list for doctor.
func WhoMayTalk(allow []string) string {
	if len(allow) == 0 {
		return "only the approvers (allow is empty)"
	}
	return strings.Join(allow, ", ")
}
