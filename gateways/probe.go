package gateways

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// probeTimeout bounds one `bot doctor --online` call to a platform.
const probeTimeout = 10 * time.Second

// Probe is one `bot doctor --online` check of a platform: a single call
// that says who the bot is.
type Probe struct {
	// Gateway names the gateway; every line starts with it.
	Gateway string
	// Call names the API method in the lines ("getMe", "auth.test").
	Call string
	// Secrets are scrubbed from a failure's text.
	Secrets *secrets.Set
	// Do makes the call with client and returns the bot's name, already
	// made safe to print; ctx carries the probe's time limit.
	Do func(ctx context.Context, client *http.Client) (string, error)
}

// Run makes the call through client (http.DefaultClient when nil) and
// reports it with its latency: "<gateway>: <call> ok in 12ms: <name>" or
// "<gateway>: <call> failed after 3ms: <error>", the error scrubbed of the
// probe's secrets.
func (p Probe) Run(ctx context.Context, client *http.Client) Status {
	if client == nil {
		client = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	began := time.Now()
	name, err := p.Do(ctx, client)
	took := time.Since(began).Round(time.Millisecond)
	if err != nil {
		return Status{Lines: []string{fmt.Sprintf("%s: %s failed after %s: %v", p.Gateway, p.Call, took, ScrubError(p.Secrets, err))}}
	}
	return Status{Runs: true, Lines: []string{fmt.Sprintf("%s: %s ok in %s: %s", p.Gateway, p.Call, took, name)}}
}
