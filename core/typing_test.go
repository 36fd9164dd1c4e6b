package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// typingGateway is the test gateway with a typing indicator: it records
// each start and stop.
type typingGateway struct {
	*recorder
	mu      sync.Mutex
	starts  int
	stops   int
	started chan struct{} // closed at the first start
	once    sync.Once
}

func newTypingGateway(r *recorder) *typingGateway {
	return &typingGateway{recorder: r, started: make(chan struct{})}
}

func (g *typingGateway) StartTyping(context.Context, core.Conversation) func() {
	g.mu.Lock()
	g.starts++
	g.mu.Unlock()
	g.once.Do(func() { close(g.started) })
	return func() {
		g.mu.Lock()
		g.stops++
		g.mu.Unlock()
	}
}

func (g *typingGateway) counts() (starts, stops int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.starts, g.stops
}

// TestFastAnswerShowsNoTyping: a model that answers at once gets its
// reply sent without a typing indicator before it (issue 34: the
// indicator was a request in three of every message's).
func TestFastAnswerShowsNoTyping(t *testing.T) {
	var gw *typingGateway
	h := newHarness(t, harnessOpts{wrap: func(r *recorder) core.Actuator { gw = newTypingGateway(r); return gw }})
	h.fake().Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Text("hello") })
	h.say(t, "c1", "hi")
	if a := h.gw.next(t); a.Text != "hello" {
		t.Fatalf("reply %q", a.Text)
	}
	if starts, _ := gw.counts(); starts != 0 {
		t.Errorf("typing shown %d times for an answer that came at once; want none", starts)
	}
}

// TestSlowAnswerShowsTyping: while the model takes longer than
// core.TypingDelay, the conversation shows typing, stopped when the turn
// ends.
func TestSlowAnswerShowsTyping(t *testing.T) {
	var gw *typingGateway
	h := newHarness(t, harnessOpts{wrap: func(r *recorder) core.Actuator { gw = newTypingGateway(r); return gw }})
	h.fake().Respond(func(fakeoai.Request) fakeoai.Step {
		select { // the model answers once typing shows (a hang guard, not a timing)
		case <-gw.started:
		case <-time.After(waitFor):
		}
		return fakeoai.Text("hello")
	})
	h.say(t, "c1", "hi")
	if a := h.gw.next(t); a.Text != "hello" {
		t.Fatalf("reply %q", a.Text)
	}
	select {
	case <-gw.started:
	default:
		t.Fatal("no typing while the model took its time")
	}
	testutil.WaitFor(t, "typing stopped", func() bool { starts, stops := gw.counts(); return starts == 1 && stops == 1 })
}
