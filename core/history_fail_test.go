package core_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// failingHistory is a MemoryHistory whose appends fail while fail is set,
// as a store that refuses a write (or does not answer) would.
type failingHistory struct {
	*core.MemoryHistory
	fail *atomic.Bool
}

func (h failingHistory) Append(ctx context.Context, conv string, msgs ...llm.Message) error {
	if h.fail.Load() {
		return errors.New("invalid byte sequence for encoding \"UTF8\": 0x00")
	}
	return h.MemoryHistory.Append(ctx, conv, msgs...)
}

// TestMessageNotStoredIsNotAnswered: a message whose history write fails
// is not sent to the model as if stored (the model would answer the
// previous message again): the turn stops and the person is told to try
// again. The next message, stored, is answered as usual.
func TestMessageNotStoredIsNotAnswered(t *testing.T) {
	fail := &atomic.Bool{}
	h := newHarness(t, harnessOpts{history: failingHistory{MemoryHistory: core.NewMemoryHistory(40), fail: fail}})
	h.fake().Push(fakeoai.Text("answer to first"), fakeoai.Text("answer to third"))
	h.say(t, "c", "first")
	if got := h.gw.next(t).Text; got != "answer to first" {
		t.Fatalf("first answer = %q", got)
	}
	fail.Store(true)
	h.say(t, "c", "second")
	got := h.gw.next(t).Text
	if !strings.Contains(got, "couldn't store your message") || !strings.Contains(got, "try again") {
		t.Fatalf("answer to a message not stored = %q; want that it was not stored", got)
	}
	if n := len(h.fake().Requests()); n != 1 {
		t.Fatalf("the model got %d requests; want 1: a message not stored is not sent as if it were", n)
	}
	fail.Store(false)
	h.say(t, "c", "third")
	if got := h.gw.next(t).Text; got != "answer to third" {
		t.Fatalf("answer after the store recovered = %q", got)
	}
}
