package telegram

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// pipeListener is a net.Listener whose connections are in-memory pipes, so
// the fake serves inside a synctest bubble, on its clock.
type pipeListener struct {
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// DialContext returns the client end of a new connection the fake accepts.
func (l *pipeListener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "telegram.pipe" }

// countingTransport counts getUpdates requests, notes when the first few
// were sent, and closes tooMany once they pass limit.
type countingTransport struct {
	next    http.RoundTripper
	polls   atomic.Int64
	limit   int64
	tooMany chan struct{}
	once    sync.Once
	mu      sync.Mutex
	sent    []time.Time // the first few polls' times on the bubble's clock
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/getUpdates") {
		c.mu.Lock()
		if len(c.sent) < 3 {
			c.sent = append(c.sent, time.Now())
		}
		c.mu.Unlock()
		if c.polls.Add(1) > c.limit {
			c.once.Do(func() { close(c.tooMany) })
		}
	}
	return c.next.RoundTrip(r)
}

// TestPollFloorAgainstAnEndpointThatAnswersAtOnce: a Bot API endpoint that
// answers getUpdates at once with nothing, whatever the timeout (a proxy,
// a misbehaving self-hosted server, the telegram-test-api emulator), was
// polled thousands of times a second while the chat was quiet. After an
// empty answer that came before PollFloor had passed, the gateway waits
// out the floor: over 10 s of the bubble's clock it polls about 10 times
// (the short first poll is not held back).
func TestPollFloorAgainstAnEndpointThatAnswersAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := newPipeListener()
		fake := faketg.New(faketg.Options{Token: testToken, AnswerAtOnce: true, Listener: ln})
		defer fake.Close()
		transport := &http.Transport{DialContext: ln.DialContext}
		defer transport.CloseIdleConnections()
		const window, floor = 10 * time.Second, time.Second
		counter := &countingTransport{next: transport, limit: 100, tooMany: make(chan struct{})}
		cfg := FastConfig(fake)
		cfg.HTTPClient = &http.Client{Transport: counter}
		cfg.PollTimeout, cfg.PollFloor = 30*time.Second, floor
		logs := &testutil.SyncBuffer{}
		gw, err := New(t.Context(), cfg, Deps{Log: zerolog.New(logs)})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		ran := make(chan error, 1)
		go func() { ran <- gw.Run(ctx, testutil.NewInbox()) }()

		start := time.Now()
		select {
		case <-counter.tooMany:
			t.Errorf("more than %d getUpdates within %s of the bubble's clock, against an endpoint that answers at once", counter.limit, time.Since(start))
		case <-time.After(window):
		}
		elapsed := time.Since(start)
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
		// The short first poll, then one long poll a floor.
		n := counter.polls.Load()
		if most := int64(elapsed/floor) + 2; n > most {
			t.Errorf("%d getUpdates in %s; want at most %d with a floor of %s", n, elapsed, most, floor)
		}
		if least := int64(elapsed/floor) - 1; n < least {
			t.Errorf("%d getUpdates in %s; want at least %d: polling goes on once a floor", n, elapsed, least)
		}
		if polls := fake.Polls(); len(polls) < 3 || polls[0].Timeout != 0 || polls[1].Timeout != 30 {
			t.Fatalf("polls %+v; want a short one, then long ones", polls[:min(len(polls), 3)])
		}
		// Within the bubble a request takes no time: the long poll follows
		// the short one at once, the next one a floor later.
		if sent := counter.sent; sent[1] != sent[0] || sent[2].Sub(sent[1]) != floor {
			t.Errorf("polls sent at %s, %s, %s; want the first two at once, the third a floor (%s) later",
				sent[0].Sub(start), sent[1].Sub(start), sent[2].Sub(start), floor)
		}
		assertNoToken(t, logs.String())
	})
}
