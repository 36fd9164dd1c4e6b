package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// NewHistory returns a fresh, empty History whose Load keeps at most max
// messages.
type NewHistory func(t *testing.T, max int) core.History

// HistoryContract tests a core.History: round trips, isolation of
// conversations, and bounding: Load must return exactly llm.Trim of
// everything appended, with max.
func HistoryContract(t *testing.T, newHistory NewHistory) {
	t.Helper()
	t.Run("EmptyConversation", func(t *testing.T) { historyEmpty(t, newHistory(t, 10)) })
	t.Run("RoundTrip", func(t *testing.T) { historyRoundTrip(t, newHistory(t, 10)) })
	t.Run("Isolation", func(t *testing.T) { historyIsolation(t, newHistory(t, 10)) })
	t.Run("Bounded", func(t *testing.T) { historyBounded(t, newHistory) })
	t.Run("LongTurnKeepsItsUserMessage", func(t *testing.T) { historyLongTurn(t, newHistory(t, 3)) })
	t.Run("LoadReturnsCopy", func(t *testing.T) { historyCopy(t, newHistory(t, 10)) })
	t.Run("Concurrent", func(t *testing.T) { historyConcurrent(t, newHistory(t, 100)) })
	t.Run("Reset", func(t *testing.T) { historyReset(t, newHistory(t, 10)) })
	t.Run("Replace", func(t *testing.T) { historyReplace(t, newHistory(t, 10)) })
}

// historyReset: Reset forgets one conversation and no other; appending
// afterwards starts afresh.
func historyReset(t *testing.T, h core.History) {
	ctx := context.Background()
	mustAppend(t, h, "alpha:1", richTurn()...)
	mustAppend(t, h, "alpha:2", turn(1)...)
	if err := h.Reset(ctx, "alpha:1"); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	if err := h.Reset(ctx, "alpha:never"); err != nil {
		t.Fatalf("Reset of an unknown conversation: %v", err)
	}
	got, err := h.Load(ctx, "alpha:1")
	if err != nil || len(got) != 0 {
		t.Fatalf("Load after Reset = %v, %v; want no messages", got, err)
	}
	other, err := h.Load(ctx, "alpha:2")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	assertMessages(t, other, turn(1))
	after := []llm.Message{{Role: llm.RoleUser, Content: "fresh"}}
	mustAppend(t, h, "alpha:1", after...)
	got, err = h.Load(ctx, "alpha:1")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	assertMessages(t, got, after)
}

// historyReplace: Replace makes exactly the given messages the history,
// later Appends go after them, other conversations are untouched.
func historyReplace(t *testing.T, h core.History) {
	ctx := context.Background()
	for i := range 3 {
		mustAppend(t, h, "slack:C1", turn(i)...)
	}
	mustAppend(t, h, "slack:C2", turn(2)...)
	kept := turn(2)
	if err := h.Replace(ctx, "slack:C1", kept); err != nil {
		t.Fatalf("Replace: %v", err)
	}
	got, err := h.Load(ctx, "slack:C1")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	assertMessages(t, got, kept)
	next := []llm.Message{{Role: llm.RoleUser, Content: "next"}, {Role: llm.RoleAssistant, Content: "ok"}}
	mustAppend(t, h, "slack:C1", next...)
	got, err = h.Load(ctx, "slack:C1")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	assertMessages(t, got, append(slices.Clone(kept), next...))
	other, err := h.Load(ctx, "slack:C2")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	assertMessages(t, other, turn(2))
	if err := h.Replace(ctx, "slack:C1", nil); err != nil {
		t.Fatalf("Replace with nothing: %v", err)
	}
	if got, err := h.Load(ctx, "slack:C1"); err != nil || len(got) != 0 {
		t.Fatalf("Load after Replace(nil) = %v, %v; want no messages", got, err)
	}
}

func historyEmpty(t *testing.T, h core.History) {
	ctx := context.Background()
	if err := h.Append(ctx, "term:local"); err != nil {
		t.Fatalf("Append of nothing: %v", err)
	}
	got, err := h.Load(ctx, "term:local")
	if err != nil || len(got) != 0 {
		t.Fatalf("Load of an empty conversation = %v, %v; want no messages, nil", got, err)
	}
}

// richTurn is one turn using every field of a message.
func richTurn() []llm.Message {
	return []llm.Message{
		{Role: llm.RoleUser, Content: "list the files, then say «fertig» ✓\nsecond line"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
			{ID: "call_1", Name: "shell", Args: `{"command":"ls -la"}`},
			{ID: "call_2", Name: "read_file", Args: `{"path":"a b.txt"}`},
		}},
		{Role: llm.RoleTool, ToolCallID: "call_1", Content: "total 0\n"},
		{Role: llm.RoleTool, ToolCallID: "call_2", Content: ""},
		{Role: llm.RoleAssistant, Content: "fertig"},
	}
}

func historyRoundTrip(t *testing.T, h core.History) {
	ctx := context.Background()
	want := richTurn()
	// In three Appends, as the engine does over a turn.
	for _, part := range [][]llm.Message{want[:1], want[1:4], want[4:]} {
		if err := h.Append(ctx, "alpha:-100:7", part...); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	got, err := h.Load(ctx, "alpha:-100:7")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	assertMessages(t, got, want)
}

func historyIsolation(t *testing.T, h core.History) {
	ctx := context.Background()
	a := []llm.Message{{Role: llm.RoleUser, Content: "in a"}}
	b := []llm.Message{{Role: llm.RoleUser, Content: "in b"}, {Role: llm.RoleAssistant, Content: "b!"}}
	mustAppend(t, h, "slack:C1", a...)
	mustAppend(t, h, "slack:C1:T1", b...)
	for conv, want := range map[string][]llm.Message{"slack:C1": a, "slack:C1:T1": b} {
		got, err := h.Load(ctx, conv)
		if err != nil {
			t.Fatalf("Load(%s): %v", conv, err)
		}
		assertMessages(t, got, want)
	}
}

// historyBounded appends turns of varying shapes one message at a time and
// checks after each that Load is llm.Trim(all, max).
func historyBounded(t *testing.T, newHistory NewHistory) {
	for _, max := range []int{1, 4, 7} {
		t.Run(fmt.Sprintf("max=%d", max), func(t *testing.T) {
			h := newHistory(t, max)
			var all []llm.Message
			for i := range 6 {
				for _, m := range turn(i) {
					mustAppend(t, h, "discord:1", m)
					all = append(all, m)
					got, err := h.Load(context.Background(), "discord:1")
					if err != nil {
						t.Fatalf("Load: %v", err)
					}
					assertMessages(t, got, llm.Trim(slices.Clone(all), max))
				}
			}
		})
	}
}

// historyLongTurn: a turn in progress longer than max keeps the user
// message that started it, and all of the turn after it, at every step;
// once the next turn starts the long one goes.
func historyLongTurn(t *testing.T, h core.History) {
	const conv = "alpha:42"
	ctx := context.Background()
	earlier := turn(0)
	mustAppend(t, h, conv, earlier...)
	long := []llm.Message{{Role: llm.RoleUser, Content: "check every host"}}
	mustAppend(t, h, conv, long...)
	for i := range 4 { // 1 + 4*2 messages, max is 3
		id := fmt.Sprintf("call_long_%d", i)
		step := []llm.Message{
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Name: "shell", Args: "{}"}}},
			{Role: llm.RoleTool, ToolCallID: id, Content: fmt.Sprint("host ", i, " ok")},
		}
		mustAppend(t, h, conv, step...)
		long = append(long, step...)
		got, err := h.Load(ctx, conv)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		assertMessages(t, got, long)
	}
	next := []llm.Message{{Role: llm.RoleUser, Content: "thanks"}, {Role: llm.RoleAssistant, Content: "welcome"}}
	mustAppend(t, h, conv, next...)
	got, err := h.Load(ctx, conv)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	assertMessages(t, got, next)
}

// turn returns a turn whose length depends on i: a plain reply, or tool calls
// and their results followed by a reply.
func turn(i int) []llm.Message {
	msgs := []llm.Message{{Role: llm.RoleUser, Content: fmt.Sprintf("question %d", i)}}
	for c := range i % 3 {
		id := fmt.Sprintf("call_%d_%d", i, c)
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Name: "t", Args: "{}"}}},
			llm.Message{Role: llm.RoleTool, ToolCallID: id, Content: "ok"})
	}
	return append(msgs, llm.Message{Role: llm.RoleAssistant, Content: fmt.Sprintf("answer %d", i)})
}

func historyCopy(t *testing.T, h core.History) {
	ctx := context.Background()
	mustAppend(t, h, "term:local", richTurn()...)
	got, err := h.Load(ctx, "term:local")
	if err != nil || len(got) == 0 {
		t.Fatalf("Load = %v, %v", got, err)
	}
	// Only the messages are required to be copies: core.MemoryHistory
	// shares the ToolCalls arrays, so callers must not modify those.
	got[0].Content = "changed"
	got[1].Role = "changed"
	again, err := h.Load(ctx, "term:local")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	assertMessages(t, again, richTurn())
}

func historyConcurrent(t *testing.T, h core.History) {
	const convs, msgs = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, convs)
	for c := range convs {
		wg.Go(func() {
			for i := range msgs {
				m := llm.Message{Role: llm.RoleUser, Content: fmt.Sprint(i)}
				if err := h.Append(context.Background(), fmt.Sprint("term:", c), m); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent Append: %v", err)
	}
	for c := range convs {
		got, err := h.Load(context.Background(), fmt.Sprint("term:", c))
		if err != nil || len(got) != msgs {
			t.Fatalf("Load(term:%d) = %d messages, %v; want %d", c, len(got), err, msgs)
		}
		for i, m := range got {
			if m.Content != fmt.Sprint(i) {
				t.Fatalf("term:%d message %d = %q; want %q (order lost)", c, i, m.Content, fmt.Sprint(i))
			}
		}
	}
}

func mustAppend(t *testing.T, h core.History, conv string, msgs ...llm.Message) {
	t.Helper()
	if err := h.Append(context.Background(), conv, msgs...); err != nil {
		t.Fatalf("Append(%s): %v", conv, err)
	}
}

// assertMessages compares message sequences; nil and empty tool-call lists
// are equal.
func assertMessages(t *testing.T, got, want []llm.Message) {
	t.Helper()
	eq := func(a, b llm.Message) bool {
		return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID &&
			slices.Equal(a.ToolCalls, b.ToolCalls)
	}
	if !slices.EqualFunc(got, want, eq) {
		t.Fatalf("messages:\n got  %+v\n want %+v", got, want)
	}
}
