package core_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// switchBudget is a Budget a test turns over its cap, or makes fail.
type switchBudget struct {
	mu   sync.Mutex
	over bool
	err  error
}

func (b *switchBudget) set(over bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.over, b.err = over, err
}

func (b *switchBudget) Exceeded(context.Context, string, time.Time) (core.BudgetCap, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return core.BudgetCap{Key: "budget.daily_tokens", What: "the daily token budget", Limit: "10 tokens", Used: "12 tokens"}, b.over, b.err
}

func (b *switchBudget) StatusLines(context.Context, string, time.Time) ([]string, error) {
	return []string{"Usage today (UTC): a line"}, nil
}

// TestBudgetApprovalOutcome: an approval outcome arriving while the
// conversation is over its budget goes into the history (the model learns
// of it in the next turn) but does not call the model; the user is told.
// A budget that cannot be read lets the turn start.
func TestBudgetApprovalOutcome(t *testing.T) {
	budget := &switchBudget{over: true}
	hist := core.NewMemoryHistory(40)
	h := newHarness(t, harnessOpts{budget: budget, history: hist})
	h.fake().Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Text("done") })
	s := core.Signal{Kind: core.KindApprovalOutcome, Conv: core.Conversation{Gateway: "test", Chat: "c"},
		Text: "[gatehouse] shell was approved and ran: ok"}
	if err := h.eng.Submit(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := h.gw.next(t).Text; !strings.Contains(got, "budget.daily_tokens = 10 tokens; used today: 12 tokens") {
		t.Errorf("told %q; want the cap", got)
	}
	msgs, err := hist.Load(context.Background(), "test:c")
	if err != nil || len(msgs) != 1 || !strings.Contains(msgs[0].Content, "approved and ran") {
		t.Errorf("history = %+v, %v; want the outcome kept", msgs, err)
	}
	if n := len(h.fake().Requests()); n != 0 {
		t.Errorf("the model had %d requests over budget, want 0", n)
	}

	budget.set(false, errors.New("disk on fire"))
	h.say(t, "c", "hello")
	if got := h.gw.next(t).Text; got != "done" {
		t.Errorf("with an unreadable budget answered %q, want the turn to run", got)
	}
	testutil.WaitFor(t, "the budget error logged", func() bool { return strings.Contains(h.log.String(), "disk on fire") })
}

// cancelDuringUsage is a UsageRecorder that, like a database driver,
// fails a write whose context has ended, and lets the user's /cancel
// arrive while the first write is under way.
type cancelDuringUsage struct {
	eng *core.Engine

	mu       sync.Mutex
	writes   int
	recorded int
}

func (u *cancelDuringUsage) AddUsage(ctx context.Context, conv string, _ llm.Usage) error {
	u.mu.Lock()
	u.writes++
	first := u.writes == 1
	u.mu.Unlock()
	if first {
		c, _ := core.ParseConversation(conv)
		s := core.Signal{Kind: core.KindMessage, Conv: c, From: "test:alice", Text: "/cancel"}
		if err := u.eng.Submit(context.Background(), s); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.recorded++
	return nil
}

// TestUsageOfAnAnswerIsRecordedDespiteCancel: the tokens of an answer the
// provider gave are spent; a /cancel arriving while they are written must
// not lose them from the budget.
func TestUsageOfAnAnswerIsRecordedDespiteCancel(t *testing.T) {
	u := &cancelDuringUsage{}
	h := newHarness(t, harnessOpts{usage: u})
	u.eng = h.eng
	h.fake().Push(fakeoai.Text("answer"))
	h.say(t, "c", "hello")
	if err := h.eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.writes != 1 || u.recorded != 1 {
		t.Fatalf("usage writes %d, recorded %d; want the answered request's usage recorded once", u.writes, u.recorded)
	}
}
