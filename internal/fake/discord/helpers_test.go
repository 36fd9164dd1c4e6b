package discord

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
)

// intents are the ones the gateway adapter asks for.
const intents = discordgo.IntentsGuildMessages | discordgo.IntentsDirectMessages | discordgo.IntentMessageContent

// client returns an unopened discordgo session pointed at s, as an adapter
// builds it: the real client, only its transport rewritten.
func client(t *testing.T, s *Server, token string) *discordgo.Session {
	t.Helper()
	dg, err := discordgo.New("Bot " + token)
	if err != nil {
		t.Fatal(err)
	}
	dg.Client = s.Client()
	dg.Identify.Intents = intents
	dg.SyncEvents = true // handlers in arrival order
	return dg
}

// open opens a session against s (setup may change it first, e.g. add
// handlers) and closes it when the test ends, before the server.
func open(t *testing.T, s *Server, setup func(*discordgo.Session)) *discordgo.Session {
	t.Helper()
	dg := client(t, s, s.Token())
	if setup != nil {
		setup(dg)
	}
	if err := dg.Open(); err != nil {
		t.Fatalf("Open against the fake: %v", err)
	}
	t.Cleanup(func() { _ = dg.Close() })
	return dg
}

// collect registers a handler that keeps every event of type T.
func collect[T any](dg *discordgo.Session) *events[T] {
	e := &events[T]{}
	dg.AddHandler(func(_ *discordgo.Session, ev T) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.got = append(e.got, ev)
	})
	return e
}

type events[T any] struct {
	mu  sync.Mutex
	got []T
}

func (e *events[T]) all() []T {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]T(nil), e.got...)
}

func (e *events[T]) len() int { return len(e.all()) }

// restError asserts err is the *discordgo.RESTError of an HTTP status and
// Discord error code.
func restError(t *testing.T, err error, status, code int) {
	t.Helper()
	var re *discordgo.RESTError
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T); want *discordgo.RESTError", err, err)
	}
	if re.Response.StatusCode != status || re.Message == nil || re.Message.Code != code {
		t.Fatalf("REST error %s; want HTTP %d, code %d", re.ResponseBody, status, code)
	}
}

// clock is a settable time source for Options.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

// Now is the clock's time.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var (
	ann  = User{ID: "300000000000000001", Username: "ann"}
	bob  = User{ID: "300000000000000002", Username: "bob"}
	dmCh = "400000000000000001"
	gCh  = "400000000000000002"
	gld  = "500000000000000001"
)
