package core_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// fakeUndoer records the requests it got and answers with a note.
type fakeUndoer struct {
	mu        sync.Mutex
	reqs      []core.UndoRequest
	preflight string
}

func (u *fakeUndoer) Undo(_ context.Context, r core.UndoRequest) (string, string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.reqs = append(u.reqs, r)
	return "Restored the workspace to before write_file at 14:02.", "workspace restored to before write_file at 14:02: notes.txt"
}

func (u *fakeUndoer) CheckpointsText(context.Context, core.Conversation) string {
	return "Checkpoints: #1"
}

func (u *fakeUndoer) Preflight(context.Context, core.Action) string { return u.preflight }

func (u *fakeUndoer) requests() []core.UndoRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]core.UndoRequest(nil), u.reqs...)
}

// TestUndoCommands: /undo and /undo N reach the Undoer with the asker and
// whether they are an approver, never the model; a bad N gets the usage;
// the model reads the Undoer's note in its history on the next turn;
// /help lists /undo and /checkpoints.
func TestUndoCommands(t *testing.T) {
	u := &fakeUndoer{}
	h := newHarness(t, harnessOpts{undo: u})
	h.say(t, "c", "/undo")
	if a := h.gw.next(t); !strings.Contains(a.Text, "Restored the workspace") {
		t.Fatalf("reply %q", a.Text)
	}
	h.sayAs(t, "test:boss", "c", "/undo 3")
	h.gw.next(t)
	h.say(t, "c", "/undo many")
	if a := h.gw.next(t); !strings.Contains(a.Text, "Usage: /undo [N]") {
		t.Fatalf("reply %q", a.Text)
	}
	h.say(t, "c", "/checkpoints")
	if a := h.gw.next(t); a.Text != "Checkpoints: #1" {
		t.Fatalf("reply %q", a.Text)
	}
	h.say(t, "c", "/help")
	if a := h.gw.next(t); !strings.Contains(a.Text, "/undo [N] — ") || !strings.Contains(a.Text, "/checkpoints — ") {
		t.Fatalf("help %q", a.Text)
	}
	got := u.requests()
	want := []core.UndoRequest{
		{Conv: core.Conversation{Gateway: "test", Chat: "c"}, By: "test:alice", Approver: false, Steps: 1},
		{Conv: core.Conversation{Gateway: "test", Chat: "c"}, By: "test:boss", Approver: true, Steps: 3},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("requests %+v, want %+v", got, want)
	}
	if n := len(h.fake().Requests()); n != 0 {
		t.Fatalf("the model saw %d requests", n)
	}
	h.fake().Push(fakeoai.Text("ok"))
	h.say(t, "c", "what changed?")
	h.gw.next(t)
	testutil.WaitFor(t, "the model's request", func() bool { return len(h.fake().Requests()) == 1 })
	found := false
	for _, m := range h.fake().Requests()[0].Messages {
		if strings.Contains(m.Content, "[gatehouse] workspace restored to before write_file at 14:02: notes.txt") {
			found = true
		}
	}
	if !found {
		t.Fatalf("the model was not told: %+v", h.fake().Requests()[0].Messages)
	}
}

// TestNoUndoerNoUndo: without an Undoer, /undo is an unknown command.
func TestNoUndoerNoUndo(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.say(t, "c", "/undo")
	if a := h.gw.next(t); !strings.Contains(a.Text, "unknown command /undo") {
		t.Fatalf("reply %q", a.Text)
	}
}

// TestHeldCallCarriesPreflightNote: a changing call held for approval
// carries the Undoer's "no checkpoint" note to the Holder; a read-only
// call is not checked.
func TestHeldCallCarriesPreflightNote(t *testing.T) {
	u := &fakeUndoer{preflight: "no checkpoint: big.iso is 20 MiB"}
	b := &fakeBroker{}
	changer := echoTool()
	changer.name, changer.readOnly = "changer", false
	h := newHarness(t, harnessOpts{undo: u, holder: b, extraTools: toolList(changer),
		rules: []core.Rule{{Tool: "*", Decision: core.NeedsApproval}}})
	b.eng = h.eng
	h.fake().Push(fakeoai.ToolCalls(fakeoai.Call{ID: "1", Name: "changer", Args: `{"text":"x"}`},
		fakeoai.Call{ID: "2", Name: "echo", Args: `{"text":"y"}`}), fakeoai.Text("held"))
	h.say(t, "c", "change it")
	h.gw.next(t)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.held) != 2 || b.held[0].Note != u.preflight || b.held[1].Note != "" {
		t.Fatalf("held %+v", b.held)
	}
}

// TestCommandWordEndsAtAnySpace: a command's first word ends at a tab or a
// line break as at a space (as the approval commands' does): "/status⇥now"
// is answered, not sent to the model, and "/undo⇥2" or "/undo⏎2" takes back
// two calls, not one.
func TestCommandWordEndsAtAnySpace(t *testing.T) {
	u := &fakeUndoer{}
	h := newHarness(t, harnessOpts{undo: u})
	h.say(t, "c", "/status\tnow")
	if a := h.gw.next(t); !strings.HasPrefix(a.Text, "Model: ") {
		t.Fatalf("/status⇥now answered %q", a.Text)
	}
	for _, text := range []string{"/undo\t2", "/undo\n2", "/undo\u00a02"} {
		h.say(t, "c", text)
		h.gw.next(t)
	}
	for i, r := range u.requests() {
		if r.Steps != 2 {
			t.Errorf("request %d: /undo with N=2 asked for %d step(s)", i, r.Steps)
		}
	}
	if n := len(h.fake().Requests()); n != 0 {
		t.Errorf("the model saw %d request(s) for commands", n)
	}
}

// stallingHistory is a MemoryHistory whose appends of tool results wait
// until release is closed: a store still writing what a turn did.
type stallingHistory struct {
	*core.MemoryHistory
	release chan struct{}
}

func (h stallingHistory) Append(ctx context.Context, conv string, msgs ...llm.Message) error {
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			<-h.release
			break
		}
	}
	return h.MemoryHistory.Append(ctx, conv, msgs...)
}

// TestUndoWaitsForACancelledTurnToEnd: /cancel stops a turn, but the turn
// still winds down (its tool stops, what it did is recorded); until it has
// ended, /undo refuses as for a turn in progress, so it cannot restore the
// workspace under a tool still running.
func TestUndoWaitsForACancelledTurnToEnd(t *testing.T) {
	started := make(chan struct{})
	block := testTool{name: "block", readOnly: true, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}}
	u := &fakeUndoer{}
	hist := stallingHistory{MemoryHistory: core.NewMemoryHistory(40), release: make(chan struct{})}
	h := newHarness(t, harnessOpts{undo: u, history: hist, extraTools: toolList(block)})
	h.fake().Push(fakeoai.ToolCalls(fakeoai.Call{ID: "b", Name: "block", Args: `{}`}))
	h.say(t, "c", "block")
	<-started
	h.say(t, "c", "/cancel")
	if got := h.gw.next(t).Text; !strings.Contains(got, "Cancelled the turn in progress") {
		t.Fatalf("/cancel answer = %q", got)
	}
	h.say(t, "c", "/undo")
	if got := h.gw.next(t).Text; !strings.Contains(got, "A turn is in progress") {
		t.Errorf("/undo while the cancelled turn winds down answered %q", got)
	}
	close(hist.release)
	if err := h.eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.say(t, "c", "/undo")
	if got := h.gw.next(t).Text; !strings.Contains(got, "Restored the workspace") {
		t.Errorf("/undo after the turn ended answered %q", got)
	}
	if n := len(u.requests()); n != 1 {
		t.Errorf("the Undoer got %d requests, want 1 (after the turn ended)", n)
	}
}

// slowDelivery is a gateway whose delivery of one reply text is confirmed
// only once release is closed: the platform has shown it (the recorder
// has it), its answer is slow to come back.
type slowDelivery struct {
	*recorder
	text    string
	release chan struct{}
}

func (g slowDelivery) Act(ctx context.Context, a core.Action) (core.Result, error) {
	res, err := g.recorder.Act(ctx, a)
	if a.Text == g.text {
		<-g.release
	}
	return res, err
}

// TestUndoRightAfterTheAnswer: the person has read the turn's answer, but
// the gateway has not confirmed its delivery yet, so the turn has not quite
// ended: an /undo then restores the workspace, as for a turn that ended
// (it was refused as "a turn is in progress": issue 21 item 10, an
// approver's /undo right after the outcome's answer in a group), and the
// model reads the /undo's note after its answer.
func TestUndoRightAfterTheAnswer(t *testing.T) {
	u := &fakeUndoer{}
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	h := newHarness(t, harnessOpts{undo: u, wrap: func(r *recorder) core.Actuator {
		return slowDelivery{recorder: r, text: "It ran: notes.txt is written.", release: release}
	}})
	t.Cleanup(open) // before the harness's cleanup, which waits for the turn
	h.fake().Push(fakeoai.Text("It ran: notes.txt is written."))
	h.say(t, "c", "write notes.txt")
	if got := h.gw.next(t).Text; got != "It ran: notes.txt is written." {
		t.Fatalf("the answer = %q", got)
	}
	h.say(t, "c", "/undo")
	if got := h.gw.next(t).Text; !strings.Contains(got, "Restored the workspace") {
		t.Fatalf("/undo right after the answer was answered %q; want the workspace restored", got)
	}
	if n := len(u.requests()); n != 1 {
		t.Fatalf("the Undoer got %d requests, want 1", n)
	}
	open()
	if err := h.eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.fake().Push(fakeoai.Text("ok"))
	h.say(t, "c", "what now?")
	h.gw.next(t)
	msgs := h.fake().Requests()[1].Messages
	var order []string
	for _, m := range msgs {
		switch {
		case strings.Contains(m.Content, "It ran: notes.txt is written."):
			order = append(order, "answer")
		case strings.Contains(m.Content, "workspace restored"):
			order = append(order, "note")
		}
	}
	if strings.Join(order, ",") != "answer,note" {
		t.Fatalf("the model's history has %v; want the answer, then the /undo's note", order)
	}
}
