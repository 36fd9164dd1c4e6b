package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// memJournal is a core.Journal that keeps what it is given, or fails.
type memJournal struct {
	mu   sync.Mutex
	puts []core.Signal
	err  error
}

func (j *memJournal) Put(_ context.Context, s core.Signal) (bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return false, j.err
	}
	j.puts = append(j.puts, s)
	return true, nil
}

// stages records the stages a journaled turn reports; fail, when set, is
// the error of recording that stage.
type stages struct {
	mu   sync.Mutex
	got  []core.TurnStage
	fail core.TurnStage
	err  error
}

func (s *stages) record(_ context.Context, st core.TurnStage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil && st == s.fail {
		return s.err
	}
	s.got = append(s.got, st)
	return nil
}

func (s *stages) list() []core.TurnStage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

func journalMsg(text string) core.Signal {
	return core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "test", Chat: "c1"}, From: "test:alice", Text: text, MessageID: "7"}
}

// A message from someone on the allow list is put in the journal and
// acknowledged (Done) before any turn: the turn comes back through
// RunJournaled. A command is still answered at once, a stranger's message
// is refused from memory; neither is journaled.
func TestJournalTakesMessagesBeforeTheirTurn(t *testing.T) {
	j := &memJournal{}
	h := newHarness(t, harnessOpts{journal: j, allow: []string{"test:alice"}})
	var done atomic.Int32
	s := journalMsg("hello")
	s.Done = func() { done.Add(1) }
	if err := h.eng.Submit(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if done.Load() != 1 {
		t.Fatalf("Done called %d times once the message was put; want 1", done.Load())
	}
	h.sayAs(t, "test:alice", "c1", "/whoami")
	h.gw.next(t)
	h.sayAs(t, "test:mallory", "c1", "let me in")
	if err := h.eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(h.fake().Requests()); n != 0 {
		t.Fatalf("the model was asked %d times before the journaled turn ran; want 0", n)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.puts) != 1 || j.puts[0].Text != "hello" || j.puts[0].MessageID != "7" {
		t.Fatalf("journal got %+v; want the one message from the allow list", j.puts)
	}
}

// A journal that cannot take a message makes Submit fail with
// ErrUnavailable, and the message is not acknowledged.
func TestJournalUnavailableIsNotAcknowledged(t *testing.T) {
	h := newHarness(t, harnessOpts{journal: &memJournal{err: fmt.Errorf("inbox: put: %w", core.ErrUnavailable)}})
	var done atomic.Int32
	s := journalMsg("hello")
	s.Done = func() { done.Add(1) }
	err := h.eng.Submit(context.Background(), s)
	if !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("Submit = %v; want ErrUnavailable", err)
	}
	if done.Load() != 0 {
		t.Fatal("a message the journal did not take was acknowledged")
	}
}

// A journaled turn records each stage as it reaches it: the message in
// the history, a tool call running, the history after it, the reply.
func TestRunJournaledRecordsStages(t *testing.T) {
	h := newHarness(t, harnessOpts{journal: &memJournal{}})
	h.fake().Push(fakeoai.ToolCalls(fakeoai.Call{ID: "c1", Name: "echo", Args: `{"text":"x"}`}), fakeoai.Text("all done"))
	st := &stages{}
	ran, err := h.eng.RunJournaled(context.Background(), core.Journaled{Signal: journalMsg("do it"), Record: st.record})
	if err != nil || !ran {
		t.Fatalf("RunJournaled = %v, %v", ran, err)
	}
	if a := h.gw.next(t); a.Text != "all done" {
		t.Fatalf("reply %q", a.Text)
	}
	want := []core.TurnStage{core.StageInHistory, core.StageTool, core.StageInHistory, core.StageReplied}
	if got := st.list(); !slices.Equal(got, want) {
		t.Fatalf("stages %v; want %v", got, want)
	}
}

// Taken over after its reply was handed over, a turn sends nothing again
// and asks the model nothing.
func TestTakeoverAfterTheReplyDoesNotSendItAgain(t *testing.T) {
	h := newHarness(t, harnessOpts{journal: &memJournal{}})
	ran, err := h.eng.RunJournaled(context.Background(), core.Journaled{Signal: journalMsg("hi"), Stage: core.StageReplied})
	if err != nil || !ran {
		t.Fatalf("RunJournaled = %v, %v", ran, err)
	}
	if n := len(h.gw.replies) + len(h.fake().Requests()); n != 0 {
		t.Fatalf("replies %v, model requests %d; want none", h.gw.replies, len(h.fake().Requests()))
	}
}

// Taken over while a tool call ran, a turn never runs it again: the
// conversation is told it was interrupted, and the history too.
func TestTakeoverOfARunningToolCallReportsItInterrupted(t *testing.T) {
	hist := core.NewMemoryHistory(40)
	h := newHarness(t, harnessOpts{journal: &memJournal{}, history: hist})
	ran, err := h.eng.RunJournaled(context.Background(), core.Journaled{Signal: journalMsg("run it"), Stage: core.StageTool})
	if err != nil || !ran {
		t.Fatalf("RunJournaled = %v, %v", ran, err)
	}
	if a := h.gw.next(t); !strings.Contains(a.Text, "interrupted and not run again") {
		t.Fatalf("reply %q; want the interruption reported", a.Text)
	}
	if n := len(h.fake().Requests()); n != 0 {
		t.Fatalf("the model was asked %d times; want 0", n)
	}
	msgs, err := hist.Load(context.Background(), "test:c1")
	if err != nil || len(msgs) != 1 || !strings.Contains(msgs[0].Content, "interrupted while a tool call ran") {
		t.Fatalf("history %+v, %v; want the interruption noted", msgs, err)
	}
}

// Taken over with the user's message already in the history, a turn runs
// on without adding it again.
func TestTakeoverWithTheMessageInHistoryDoesNotAddItAgain(t *testing.T) {
	hist := core.NewMemoryHistory(40)
	if err := hist.Append(context.Background(), "test:c1", llm.Message{Role: llm.RoleUser, Content: "what time is it"}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOpts{journal: &memJournal{}, history: hist})
	h.fake().Push(fakeoai.Text("noon"))
	st := &stages{}
	ran, err := h.eng.RunJournaled(context.Background(), core.Journaled{Signal: journalMsg("what time is it"), Stage: core.StageInHistory, Record: st.record})
	if err != nil || !ran {
		t.Fatalf("RunJournaled = %v, %v", ran, err)
	}
	if a := h.gw.next(t); a.Text != "noon" {
		t.Fatalf("reply %q", a.Text)
	}
	users := 0
	for _, m := range h.fake().Requests()[0].Messages {
		if m.Role == "user" {
			users++
		}
	}
	if users != 1 {
		t.Fatalf("the model saw the user's message %d times; want once", users)
	}
	if got := st.list(); !slices.Equal(got, []core.TurnStage{core.StageReplied}) {
		t.Fatalf("stages %v; want [replied]", got)
	}
}

// A turn whose reply stage cannot be recorded (its claim was taken over)
// does not send the reply: the instance that took it over answers.
func TestLostClaimSendsNoReply(t *testing.T) {
	h := newHarness(t, harnessOpts{journal: &memJournal{}})
	h.fake().Push(fakeoai.Text("answer"))
	st := &stages{fail: core.StageReplied, err: errors.New("store: inbox entry not held")}
	ran, err := h.eng.RunJournaled(context.Background(), core.Journaled{Signal: journalMsg("q"), Record: st.record})
	if err != nil || !ran {
		t.Fatalf("RunJournaled = %v, %v", ran, err)
	}
	if len(h.gw.replies) != 0 {
		t.Fatalf("replies %v; want none", h.gw.replies)
	}
}

// A tool call whose stage cannot be recorded is not run.
func TestLostClaimRunsNoTool(t *testing.T) {
	var runs atomic.Int32
	tool := testTool{name: "poke", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { runs.Add(1); return "ok", nil }}
	h := newHarness(t, harnessOpts{journal: &memJournal{}, extraTools: toolList(tool)})
	h.fake().Push(fakeoai.ToolCalls(fakeoai.Call{ID: "c1", Name: "poke", Args: `{}`}), fakeoai.Text("never"))
	st := &stages{fail: core.StageTool, err: errors.New("store: inbox entry not held")}
	ran, err := h.eng.RunJournaled(context.Background(), core.Journaled{Signal: journalMsg("q"), Record: st.record})
	if err != nil || !ran {
		t.Fatalf("RunJournaled = %v, %v", ran, err)
	}
	if runs.Load() != 0 || len(h.gw.replies) != 0 {
		t.Fatalf("tool runs %d, replies %v; want none", runs.Load(), h.gw.replies)
	}
}

// Files another instance received and could not carry over are named to
// the model plainly.
func TestFilesLostAreToldToTheModel(t *testing.T) {
	h := newHarness(t, harnessOpts{journal: &memJournal{}})
	h.fake().Push(fakeoai.Text("please resend"))
	ran, err := h.eng.RunJournaled(context.Background(), core.Journaled{Signal: journalMsg(""), FilesLost: 2})
	if err != nil || !ran {
		t.Fatalf("RunJournaled = %v, %v", ran, err)
	}
	h.gw.next(t)
	if m := lastMessage(t, h.fake(), 0); !strings.Contains(m.Content, "2 file(s)") || !strings.Contains(m.Content, "could not be carried over") {
		t.Fatalf("the model saw %q; want the lost files named", m.Content)
	}
}

// cancelJournal is a memJournal that can stop a turn on another instance.
type cancelJournal struct {
	memJournal
	elsewhere bool
	asked     atomic.Int32
}

func (j *cancelJournal) CancelElsewhere(context.Context, core.Conversation) (bool, error) {
	j.asked.Add(1)
	return j.elsewhere, nil
}

// /cancel with no turn running here asks the journal to stop the one
// running on another instance, and says which it stopped.
func TestCancelReachesAnotherInstance(t *testing.T) {
	for _, elsewhere := range []bool{true, false} {
		j := &cancelJournal{elsewhere: elsewhere}
		h := newHarness(t, harnessOpts{journal: j})
		h.say(t, "c1", "/cancel")
		a := h.gw.next(t)
		if got := strings.Contains(a.Text, "on another instance"); got != elsewhere || j.asked.Load() != 1 {
			t.Fatalf("elsewhere %v: reply %q, asked %d times", elsewhere, a.Text, j.asked.Load())
		}
	}
}
