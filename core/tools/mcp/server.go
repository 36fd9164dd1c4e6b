package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// terminateGrace is how long a stdio server has, once its input is closed,
// before it is sent SIGTERM, and again before SIGKILL.
const terminateGrace = 2 * time.Second

// server is one configured MCP server: its connection, when up, and the
// names of the tools it has in the Registry.
type server struct {
	cfg     ServerConfig
	reg     Registrar
	log     zerolog.Logger
	secrets *secrets.Set  // nil: none
	ping    time.Duration // how often an HTTP server is pinged; 0: never
	refresh chan struct{} // a notifications/tools/list_changed arrived

	renew chan struct{} // a call waits for a session to replace a refused one

	mu      sync.Mutex
	cs      *clientSession // nil while the server is not up
	changed chan struct{}  // closed (and replaced) when cs changes
	refused *clientSession // the last session the server refused
	names   []string       // its tools in the Registry
	state   string
}

// session is a started server.
type session struct {
	cs    *clientSession
	cmd   *exec.Cmd // nil for an HTTP server
	tools []tools.Tool
}

func newServer(cfg ServerConfig, reg Registrar, log zerolog.Logger) *server {
	return &server{
		cfg: cfg, reg: reg, refresh: make(chan struct{}, 1), renew: make(chan struct{}, 1),
		changed: make(chan struct{}), state: "starting",
		log: log.With().Str("mcp_server", cfg.Name).Logger(),
	}
}

// current returns the session tool calls go to, or nil.
func (s *server) current() *clientSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cs
}

// setSession makes cs the session calls go to and wakes the calls that
// wait for a new one; s.mu is held.
func (s *server) setSession(cs *clientSession) {
	if cs != s.cs {
		close(s.changed)
		s.changed = make(chan struct{})
	}
	s.cs = cs
}

// replace returns a session to send a call again on, other than old,
// which the server refused (it was restarted and forgot it): serve ends
// old and run starts the next at once. It waits until the next is up or
// ctx ends.
func (s *server) replace(ctx context.Context, old *clientSession) (*clientSession, error) {
	s.mu.Lock()
	s.refused = old
	s.mu.Unlock()
	select {
	case s.renew <- struct{}{}:
	default:
	}
	for {
		s.mu.Lock()
		cs, changed := s.cs, s.changed
		s.mu.Unlock()
		if cs != nil && cs != old {
			return cs, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		}
	}
}

// wasRefused reports whether the server refused cs.
func (s *server) wasRefused(cs *clientSession) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused == cs
}

func (s *server) setState(state string) {
	s.mu.Lock()
	s.state = state
	s.mu.Unlock()
}

// signalRefresh asks serve to list the tools again.
func (s *server) signalRefresh() {
	select {
	case s.refresh <- struct{}{}:
	default:
	}
}

// connect starts the server (the child process or the HTTP session),
// initialises it and lists its tools, within StartTimeout.
func (s *server) connect(ctx context.Context) (*session, error) {
	c := newConn(s.log, func(method string) {
		if method == "notifications/tools/list_changed" {
			s.signalRefresh()
		}
	})
	sess := &session{cs: &clientSession{c: c}}
	var stderr *tailWriter
	var ht *httpTransport
	if s.cfg.URL != "" {
		ht = newHTTPTransport(c, s.cfg.URL, &http.Client{Transport: newHeaderTransport(s.cfg.Headers, s.cfg.URL, http.DefaultTransport)})
	} else {
		stderr = &tailWriter{log: s.log, secrets: s.secrets}
		sess.cmd = s.command(stderr)
		if _, err := startStdio(c, sess.cmd); err != nil {
			c.end(err)
			return nil, s.startError(ctx, stderr, err)
		}
	}
	sctx, cancel := context.WithTimeout(ctx, s.cfg.startTimeout())
	defer cancel()
	if err := sess.cs.initialize(sctx); err != nil {
		s.stop(sess)
		return nil, s.startError(sctx, stderr, err)
	}
	if ht != nil {
		ht.listen()
	}
	var err error
	if sess.tools, err = s.list(sctx, sess.cs); err != nil {
		s.stop(sess)
		return nil, s.startError(sctx, stderr, err)
	}
	return sess, nil
}

// startError names why a start failed, with the child's last words.
func (s *server) startError(ctx context.Context, stderr *tailWriter, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within start_timeout %s: %w", s.cfg.startTimeout(), err)
	}
	if last := stderr.last(); last != "" {
		err = fmt.Errorf("%w (stderr: %s)", err, last)
	}
	return fmt.Errorf("mcp: start %s: %w", s.cfg.Name, err)
}

// command is the stdio child: its environment is exactly Env plus PATH and
// HOME from the bot unless Env sets them, never the bot's own secrets.
func (s *server) command(stderr *tailWriter) *exec.Cmd {
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Dir = s.cfg.Dir
	cmd.Stderr = stderr
	cmd.WaitDelay = terminateGrace // a grandchild holding stderr cannot hold Wait
	cmd.Env = childEnv(s.cfg.Env)
	setProcAttr(cmd)
	return cmd
}

// childEnv is env plus PATH and HOME from the bot unless env sets them.
func childEnv(env map[string]string) []string {
	out := make([]string, 0, len(env)+2)
	for _, k := range []string{"PATH", "HOME"} {
		if _, set := env[k]; !set {
			if v, ok := os.LookupEnv(k); ok {
				out = append(out, k+"="+v)
			}
		}
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// Caps of one server's tool list, which goes to the model with every
// request: the tools past them are left out, with one warning.
const (
	// MaxTools is the most tools of one server offered.
	MaxTools = 128
	// MaxToolBytes caps the bytes of one server's tools as offered: their
	// names, descriptions and schemas.
	MaxToolBytes = 256 << 10
	// MaxListPages is the most tools/list pages read from one server.
	MaxListPages = 16
	// maxLeftOutLogged is how many tools left out of one listing are
	// logged one by one; the others are counted in the caps' warning.
	maxLeftOutLogged = 8
)

// list fetches the server's tools (their pages, up to MaxListPages) and
// converts them; a tool whose name or schema cannot be offered is logged
// and left out, and so are the tools past MaxTools or MaxToolBytes.
func (s *server) list(ctx context.Context, cs *clientSession) ([]tools.Tool, error) {
	var out []tools.Tool
	seen := map[string]bool{}
	size, over, bad, unread := 0, 0, 0, false
	cursor := ""
	for page := 0; ; page++ {
		if page == MaxListPages {
			unread = true
			break
		}
		res, err := cs.listTools(ctx, cursor)
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		for _, t := range res.Tools {
			if len(out) == MaxTools {
				over++
				continue
			}
			tl, err := newTool(s, t)
			if err == nil && seen[tl.spec.Name] {
				err = fmt.Errorf("its name %s is taken", tl.spec.Name)
			}
			if err != nil {
				if bad++; bad <= maxLeftOutLogged {
					s.logLeftOut(t.Name, err)
				}
				continue
			}
			n := len(tl.spec.Name) + len(tl.spec.Description) + len(tl.spec.Parameters)
			if size+n > MaxToolBytes {
				over++
				continue
			}
			seen[tl.spec.Name], size = true, size+n
			out = append(out, tl)
		}
		if res.NextCursor == "" {
			break
		}
		if len(out) == MaxTools {
			unread = true
			break
		}
		cursor = res.NextCursor
	}
	if bad > maxLeftOutLogged {
		s.log.Warn().Int("left_out", bad).Int("logged", maxLeftOutLogged).Msg("mcp tools left out: more than were logged one by one")
	}
	if over > 0 || unread {
		s.log.Warn().Int("offered", len(out)).Int("left_out", over).Bool("pages_unread", unread).
			Int("max_tools", MaxTools).Int("max_bytes", MaxToolBytes).Int("max_pages", MaxListPages).
			Msg("mcp tools left out: over the server's caps")
	}
	return out, nil
}

// install makes cs the session calls go to and list its tools in the
// Registry, replacing the server's previous ones at once.
func (s *server) install(cs *clientSession, list []tools.Tool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, len(list))
	for i, t := range list {
		names[i] = t.Spec().Name
	}
	if err := s.reg.Replace(s.names, list...); err != nil {
		return fmt.Errorf("mcp %s: register tools: %w", s.cfg.Name, err)
	}
	s.setSession(cs)
	s.names, s.state = names, fmt.Sprintf("running, %d tools", len(names))
	return nil
}

// withdraw removes the server's tools from the Registry.
func (s *server) withdraw(state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.reg.Replace(s.names); err != nil { // removing cannot fail
		s.log.Error().Err(err).Msg("mcp tools withdraw")
	}
	s.setSession(nil)
	s.names, s.state = nil, state
}

// stop closes the session: a stdio child's input is closed, then it is
// sent SIGTERM and SIGKILL if it lingers, and its process group is killed
// so that nothing it started outlives it.
func (s *server) stop(sess *session) {
	if err := sess.cs.Close(); err != nil {
		s.log.Debug().Err(err).Msg("mcp session close")
	}
	killGroup(sess.cmd)
}

// run starts the server and keeps it up until ctx ends: a server that
// fails to start or stops is started again after a backoff doubling from
// minBackoff to maxBackoff (back to minBackoff after a run that lasted
// maxBackoff).
func (s *server) run(ctx context.Context, minBackoff, maxBackoff time.Duration) {
	backoff := minBackoff
	for {
		began := time.Now()
		sess, err := s.connect(ctx)
		if ctx.Err() != nil {
			if sess != nil {
				s.stop(sess)
			}
			return
		}
		if err != nil {
			// Redacted before /status cuts it: a cut secret is no longer
			// found whole by the reply's redaction.
			s.setState("failed: " + s.secrets.Redact(err.Error()))
			s.log.Warn().Err(err).Dur("retry_in", backoff).Msg("mcp server failed to start; its tools are not offered")
		} else {
			s.serve(ctx, sess)
			if ctx.Err() != nil {
				return
			}
			if s.wasRefused(sess.cs) {
				continue // at once: the server is up, it forgot the session
			}
			if time.Since(began) >= maxBackoff {
				backoff = minBackoff
			}
			s.log.Warn().Dur("restart_in", backoff).Msg("mcp server stopped; its tools are withdrawn until it is back")
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-s.renew: // a call waits: its session ended as the server refused it
			t.Stop()
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// serve offers a started server's tools until ctx ends or the server
// stops, refreshing them on notifications/tools/list_changed.
func (s *server) serve(ctx context.Context, sess *session) {
	if err := s.install(sess.cs, sess.tools); err != nil {
		s.log.Error().Err(err).Msg("mcp tools not offered")
	} else {
		s.log.Info().Int("tools", len(sess.tools)).Str("transport", s.cfg.Transport()).Msg("mcp server ready; its tools are offered")
	}
	ended := make(chan struct{})
	go func() {
		_ = sess.cs.Wait()
		close(ended)
	}()
	state := "restarting"
	defer func() {
		s.withdraw(state)
		s.stop(sess)
		<-ended
	}()
	listed := time.Now()      // the tools were listed as the session began
	var ping <-chan time.Time // an HTTP server's only sign of life
	if sess.cmd == nil && s.ping > 0 {
		t := time.NewTicker(s.ping)
		defer t.Stop()
		ping = t.C
	}
	for {
		select {
		case <-ctx.Done():
			state = "stopped"
			return
		case <-ended:
			return
		case <-s.renew:
			if s.wasRefused(sess.cs) {
				s.log.Info().Msg("mcp server refused its session (restarted?); starting a new one")
				return
			}
		case <-ping:
			if err := s.pingOnce(ctx, sess.cs); err != nil {
				if ctx.Err() != nil {
					state = "stopped"
					return
				}
				s.log.Warn().Err(err).Msg("mcp server does not answer; its tools are withdrawn")
				return
			}
		case <-s.refresh:
			if !s.refreshTools(ctx, sess, ended, &listed) {
				if ctx.Err() != nil {
					state = "stopped"
				}
				return
			}
		}
	}
}

// pingOnce pings the server within start_timeout. A server that has no
// ping (method not found) is taken as alive.
func (s *server) pingOnce(ctx context.Context, cs *clientSession) error {
	pctx, cancel := context.WithTimeout(ctx, s.cfg.startTimeout())
	defer cancel()
	err := cs.ping(pctx)
	if isMethodNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mcp %s: ping: %w", s.cfg.Name, err)
	}
	return nil
}

// tailWriter logs a child's stderr line by line at debug level and keeps
// its last line for a start error. Each line is redacted before it is cut
// to maxLine: the logger's scrubber would not know the head of a secret
// the cut fell inside.
type tailWriter struct {
	log     zerolog.Logger
	secrets *secrets.Set

	mu      sync.Mutex
	partial []byte
	lastLn  string
}

// maxLine caps a stderr line kept or logged; maxPartial caps the raw
// bytes of a line kept until its newline.
const (
	maxLine    = 512
	maxPartial = 4 * maxLine
)

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(w.partial[:i]))
		w.partial = w.partial[i+1:]
		if line == "" {
			continue
		}
		line = tools.Truncate(w.secrets.Redact(line), maxLine)
		w.lastLn = line
		w.log.Debug().Str("stderr", line).Msg("mcp server stderr")
	}
	// Redacted whole, then cut to maxLine: a secret the raw cap falls
	// inside is past the cut.
	if len(w.partial) > maxPartial {
		w.partial = w.partial[:maxPartial]
	}
	return len(p), nil
}

func (w *tailWriter) last() string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lastLn == "" {
		return tools.Truncate(w.secrets.Redact(strings.TrimSpace(string(w.partial))), maxLine)
	}
	return w.lastLn
}
