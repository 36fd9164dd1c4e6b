package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// Registrar is where a Manager offers the servers' tools: the core/tools
// Registry.
type Registrar interface {
	// Replace removes the tools named in remove and registers add at once.
	Replace(remove []string, add ...tools.Tool) error
}

var _ Registrar = (*tools.Registry)(nil)

// Restart backoff defaults of Options.
const (
	DefaultMinBackoff = time.Second
	DefaultMaxBackoff = time.Minute
)

// DefaultPingInterval is how often a Streamable HTTP server is pinged by
// default (Options.PingInterval).
const DefaultPingInterval = 30 * time.Second

// Options configure a Manager.
type Options struct {
	// Registry receives the servers' tools.
	Registry Registrar
	// Log receives the servers' starts, stops and stderr (debug).
	Log zerolog.Logger
	// Secrets are removed from what a server says of its tools (their
	// descriptions and schemas) before the model sees it.
	Secrets *secrets.Set
	// MinBackoff and MaxBackoff bound the delay before a server that
	// failed or stopped is started again (defaults 1s and 1min).
	MinBackoff, MaxBackoff time.Duration
	// PingInterval is how often a running Streamable HTTP server is pinged
	// (default 30s): one that does not answer has its tools withdrawn and
	// is started again. Nothing else notices a server without a standalone
	// SSE stream going away. A stdio server's exit is seen at once.
	PingInterval time.Duration
}

// Manager keeps the configured MCP servers running and their tools in
// the Registry.
type Manager struct {
	opts    Options
	servers []*server
}

// New checks the servers' configuration and returns their Manager; nothing
// starts before Run.
func New(servers []ServerConfig, opts Options) (*Manager, error) {
	if opts.Registry == nil {
		return nil, fmt.Errorf("mcp: no registry")
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(DefaultMaxBackoff, opts.MinBackoff)
	}
	if opts.PingInterval <= 0 {
		opts.PingInterval = DefaultPingInterval
	}
	m := &Manager{opts: opts}
	seen := map[string]bool{}
	for _, c := range servers {
		if err := check(c); err != nil {
			return nil, err
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("mcp: server %q configured twice", c.Name)
		}
		seen[c.Name] = true
		s := newServer(c, opts.Registry, opts.Log)
		s.secrets, s.ping = opts.Secrets, opts.PingInterval
		m.servers = append(m.servers, s)
	}
	return m, nil
}

// check reports a configuration a server cannot start with.
func check(c ServerConfig) error {
	if err := CheckName(c.Name); err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	if (c.Command == "") == (c.URL == "") {
		return fmt.Errorf("mcp: server %s: set command (stdio) or url (Streamable HTTP), not both", c.Name)
	}
	return nil
}

// Run starts every server in parallel and keeps each up (see the package
// doc) until ctx ends; it returns once every server is stopped and every
// child has exited. A server that fails is logged; the others run on.
func (m *Manager) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Go(func() { s.run(ctx, m.opts.MinBackoff, m.opts.MaxBackoff) })
	}
	wg.Wait()
	return nil
}

// Status is a server's state for people.
type Status struct {
	Name, Transport string
	// State is "starting", "running, N tools", "failed: …", "restarting"
	// or "stopped".
	State string
	Tools int
}

// Statuses lists the servers' states in configuration order.
func (m *Manager) Statuses() []Status {
	out := make([]Status, len(m.servers))
	for i, s := range m.servers {
		s.mu.Lock()
		out[i] = Status{Name: s.cfg.Name, Transport: s.cfg.Transport(), State: s.state, Tools: len(s.names)}
		s.mu.Unlock()
	}
	return out
}

// maxStateLen bounds a server's state in /status: a failure's error can
// carry a long stderr, which the log and bot doctor show in full.
const maxStateLen = 200

// StatusLines says every server's state, for /status (a
// core.StatusReporter): one line, servers in configuration order.
func (m *Manager) StatusLines(context.Context, core.Conversation) []string {
	st := m.Statuses()
	if len(st) == 0 {
		return nil
	}
	parts := make([]string, len(st))
	for i, s := range st {
		state, _, cut := strings.Cut(s.State, "\n")
		if r := []rune(state); len(r) > maxStateLen {
			state, cut = string(r[:maxStateLen]), true
		}
		if cut {
			state += " …"
		}
		// A failure's text may carry the child's stderr: untrusted.
		parts[i] = fmt.Sprintf("%s (%s) %s", s.Name, s.Transport, textutil.GraphicLine(state))
	}
	return []string{"MCP servers: " + strings.Join(parts, "; ")}
}

var _ core.StatusReporter = (*Manager)(nil)

// Probe starts one server, lists its tools and stops it (bot doctor). It
// returns the names the tools would be offered under. sec is removed from
// the child's stderr before it is cut for the error, as for a running
// server: a secret the cut falls inside is no longer found whole later.
func Probe(ctx context.Context, c ServerConfig, log zerolog.Logger, sec *secrets.Set) ([]string, error) {
	if err := check(c); err != nil {
		return nil, err
	}
	s := newServer(c, nopRegistrar{}, log)
	s.secrets = sec
	sess, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer s.stop(sess)
	names := make([]string, len(sess.tools))
	for i, t := range sess.tools {
		names[i] = t.Spec().Name
	}
	return names, nil
}

type nopRegistrar struct{}

func (nopRegistrar) Replace([]string, ...tools.Tool) error { return nil }
