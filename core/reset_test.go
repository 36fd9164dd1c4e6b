package core_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestResetDuringATurnKeepsNothingOfIt: /reset while a turn waits on a
// slow tool call stops that turn (as /cancel does), and nothing of it —
// the user's message, the call, its result, a reply — is stored after the
// reset; the conversation's next turn starts from an empty history. The
// turn went on and stored its reply after /reset had said the history was
// forgotten.
func TestResetDuringATurnKeepsNothingOfIt(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	slow := testTool{name: "slow", readOnly: true, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		close(started)
		select { // ends with its context, or when the test lets it go
		case <-ctx.Done():
			return "", ctx.Err()
		case <-release:
			return "slow result", nil
		}
	}}
	hist := &rawHistory{}
	h, _ := brokerHarness(t, harnessOpts{extraTools: toolList(slow), history: hist})
	h.fake().Push(fakeoai.ToolCalls(fakeoai.Call{ID: "s", Name: "slow", Args: `{}`}), fakeoai.Text("the slow answer"))
	h.say(t, "c1", "remember the word pelican, then run the slow tool")
	<-started
	h.say(t, "c1", "/reset")
	if got := h.gw.next(t).Text; !strings.Contains(got, "forgot") || !strings.Contains(got, "stopped the turn in progress") {
		t.Fatalf("/reset answer = %q", got)
	}
	close(release)
	if err := h.eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if msgs := hist.stored("test:c1"); len(msgs) != 0 {
		t.Fatalf("after /reset during the turn the history holds %d message(s): %+v", len(msgs), msgs)
	}
	h.say(t, "c1", "which word did I say?")
	testutil.WaitFor(t, "the next turn's request", func() bool { return len(h.fake().Requests()) >= 2 })
	if err := h.eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := h.fake().Requests()
	last := reqs[len(reqs)-1]
	if len(last.Messages) != 2 || strings.Contains(last.Messages[1].Content, "pelican") {
		t.Fatalf("the next turn's request holds %d messages: %+v", len(last.Messages), last.Messages)
	}
}

// rawHistory is a History that stores every message as it is given, as
// the store's tables do (MemoryHistory and the store's Load trim a
// history to start at a user message, which would hide a stored reply).
type rawHistory struct {
	mu    sync.Mutex
	convs map[string][]llm.Message
}

func (h *rawHistory) Load(_ context.Context, conv string) ([]llm.Message, error) {
	return llm.Trim(h.stored(conv), 0), nil
}

func (h *rawHistory) stored(conv string) []llm.Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.convs[conv])
}

func (h *rawHistory) Append(_ context.Context, conv string, msgs ...llm.Message) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.convs == nil {
		h.convs = map[string][]llm.Message{}
	}
	h.convs[conv] = append(h.convs[conv], msgs...)
	return nil
}

func (h *rawHistory) Reset(_ context.Context, conv string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.convs, conv)
	return nil
}

func (h *rawHistory) Replace(_ context.Context, conv string, msgs []llm.Message) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.convs[conv] = slices.Clone(msgs)
	return nil
}

// TestResetWhileTheModelThinks: /reset while a turn waits on the model
// stops it quietly (no "Sorry, I couldn't finish" after /reset's answer)
// and keeps nothing of it, the user's message included.
func TestResetWhileTheModelThinks(t *testing.T) {
	hist := &rawHistory{}
	h, _ := brokerHarness(t, harnessOpts{history: hist})
	h.fake().Push(fakeoai.Hang())
	h.say(t, "c1", "remember the word pelican")
	testutil.WaitFor(t, "the turn's request to reach the model", func() bool { return len(h.fake().Requests()) == 1 })
	h.say(t, "c1", "/reset")
	if got := h.gw.next(t).Text; !strings.Contains(got, "stopped the turn in progress") {
		t.Fatalf("/reset answer = %q", got)
	}
	if err := h.eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if msgs := hist.stored("test:c1"); len(msgs) != 0 {
		t.Fatalf("after /reset the history holds %+v", msgs)
	}
	select {
	case a := <-h.gw.ch:
		t.Fatalf("the stopped turn said %q after /reset", a.Text)
	default:
	}
}
