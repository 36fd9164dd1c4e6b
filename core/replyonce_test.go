package core_test

import (
	"context"
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// A journaled turn records its reply's text with the stage "replied",
// before the reply is handed over.
func TestRunJournaledRecordsTheReplyText(t *testing.T) {
	h := newHarness(t, harnessOpts{journal: &memJournal{}})
	h.fake().Push(fakeoai.Text("all done"))
	st := &stages{}
	var mu sync.Mutex
	var recorded []string
	ran, err := h.eng.RunJournaled(context.Background(), core.Journaled{Signal: journalMsg("do it"), ID: 7, Record: st.record,
		RecordReply: func(_ context.Context, text string) error {
			mu.Lock()
			defer mu.Unlock()
			if len(h.gw.replies) != 0 {
				t.Error("the reply was handed over before it was recorded")
			}
			recorded = append(recorded, text)
			return nil
		}})
	if err != nil || !ran {
		t.Fatalf("RunJournaled = %v, %v", ran, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(recorded) != 1 || recorded[0] != "all done" {
		t.Fatalf("recorded replies %q; want the one reply", recorded)
	}
	if r := h.gw.next(t); r.Text != "all done" {
		t.Fatalf("reply %q", r.Text)
	}
}

// Taken over after its reply was recorded, a turn hands the recorded text
// over again (the gateways' outbox sends it unless it has it) and asks the
// model nothing.
func TestTakeoverAfterTheReplyRecordedHandsItOverAgain(t *testing.T) {
	h := newHarness(t, harnessOpts{journal: &memJournal{}})
	ran, err := h.eng.RunJournaled(context.Background(), core.Journaled{Signal: journalMsg("hi"), ID: 7,
		Stage: core.StageReplied, Reply: "the answer"})
	if err != nil || !ran {
		t.Fatalf("RunJournaled = %v, %v", ran, err)
	}
	if r := h.gw.next(t); r.Text != "the answer" || r.ReplyTo != "7" {
		t.Fatalf("reply %+v; want the recorded answer to message 7", r)
	}
	if n := len(h.fake().Requests()); n != 0 {
		t.Fatalf("model asked %d times; want 0", n)
	}
}

// JournalEntry reads what WithJournalEntry put; 0 is no entry.
func TestJournalEntryRoundTrip(t *testing.T) {
	ctx := context.Background()
	if _, ok := core.JournalEntry(ctx); ok {
		t.Fatal("an entry in a bare context")
	}
	if id, ok := core.JournalEntry(core.WithJournalEntry(ctx, 42)); !ok || id != 42 {
		t.Fatalf("JournalEntry = %d, %v; want 42", id, ok)
	}
	if _, ok := core.JournalEntry(core.WithJournalEntry(ctx, 0)); ok {
		t.Fatal("entry 0 reported")
	}
}

// A held call of a journaled turn taken over after its message was in
// the history is held as Again (its earlier run may have held it); one of
// a turn that starts afresh is not.
func TestHeldAgainAfterATakeover(t *testing.T) {
	for _, tc := range []struct {
		stage core.TurnStage
		again bool
	}{{core.StageReceived, false}, {core.StageInHistory, true}} {
		b := &fakeBroker{}
		h := newHarness(t, harnessOpts{journal: &memJournal{}, holder: b,
			rules: []core.Rule{{Tool: "*", Decision: core.NeedsApproval}}})
		b.eng = h.eng
		h.fake().Push(fakeoai.ToolCalls(fakeoai.Call{ID: "1", Name: "echo", Args: `{"text":"x"}`}), fakeoai.Text("held"))
		st := &stages{}
		ran, err := h.eng.RunJournaled(context.Background(), core.Journaled{Signal: journalMsg("do it"), ID: 3, Stage: tc.stage, Record: st.record})
		if err != nil || !ran {
			t.Fatalf("RunJournaled = %v, %v", ran, err)
		}
		b.mu.Lock()
		if len(b.held) != 1 || b.held[0].Again != tc.again {
			t.Errorf("from stage %v: held %+v; want one, Again %v", tc.stage, b.held, tc.again)
		}
		b.mu.Unlock()
	}
}
