package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// fakeBroker stands in for hitl.Broker: it answers /pending, lists its
// commands, reports status, holds calls and cancels "runs".
type fakeBroker struct {
	eng *core.Engine // set once the harness is built, before any message

	mu        sync.Mutex
	held      []core.Held
	cancelled []core.Conversation
}

var (
	_ core.CommandHandler = (*fakeBroker)(nil)
	_ core.CommandLister  = (*fakeBroker)(nil)
	_ core.StatusReporter = (*fakeBroker)(nil)
	_ core.Holder         = (*fakeBroker)(nil)
	_ core.RunCanceller   = (*fakeBroker)(nil)
)

func (b *fakeBroker) HandleCommand(ctx context.Context, s core.Signal) bool {
	if !strings.HasPrefix(s.Text, "/pending") {
		return false
	}
	if _, err := b.eng.Act(ctx, core.Action{Kind: core.ActionReply, Conv: s.Conv, Text: "No pending approvals."}); err != nil {
		panic(err)
	}
	return true
}

func (b *fakeBroker) Commands() []core.CommandHelp {
	return []core.CommandHelp{
		{Name: "approve", Args: "<token> [always]", Summary: "run a held action"},
		{Name: "deny", Args: "<token> [reason]", Summary: "refuse a held action"},
		{Name: "pending", Summary: "list the held actions"},
	}
}

func (b *fakeBroker) StatusLines(_ context.Context, conv core.Conversation) []string {
	return []string{"Pending approvals here: 0 (" + conv.Key() + ")"}
}

func (b *fakeBroker) Hold(_ context.Context, h core.Held) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held = append(b.held, h)
	return "held for a human's approval", nil
}

func (b *fakeBroker) CancelRuns(conv core.Conversation) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cancelled = append(b.cancelled, conv)
	return 1
}

func (b *fakeBroker) holds() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.held)
}

func brokerHarness(t *testing.T, o harnessOpts) (*harness, *fakeBroker) {
	t.Helper()
	b := &fakeBroker{}
	o.holder, o.commands = b, b
	h := newHarness(t, o)
	b.eng = h.eng
	return h, b
}

// TestCommandsAnsweredWhileTurnWaitsOnModel: with the only concurrency
// slot taken by a turn hanging on the model, /pending and /help are
// answered before that turn says anything, and /cancel ends it.
func TestCommandsAnsweredWhileTurnWaitsOnModel(t *testing.T) {
	h, b := brokerHarness(t, harnessOpts{concurrency: 1})
	h.fake().Push(fakeoai.Hang())
	h.say(t, "c1", "a slow question")
	testutil.WaitFor(t, "the turn's request to reach the model", func() bool { return len(h.fake().Requests()) == 1 })

	h.say(t, "c1", "/pending")
	if got := h.gw.next(t); got.Text != "No pending approvals." {
		t.Fatalf("first reply while the turn hangs = %q; want the /pending answer", got.Text)
	}
	done := make(chan struct{})
	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "test", Chat: "c1"}, From: "test:alice",
		Text: "/help", Done: func() { close(done) }}
	if err := h.eng.Submit(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	help := h.gw.next(t).Text
	for _, want := range []string{"/help", "/start", "/status", "/reset", "/cancel", "/approve <token> [always] — run a held action", "/pending"} {
		if !strings.Contains(help, want) {
			t.Errorf("/help lacks %q:\n%s", want, help)
		}
	}
	select {
	case <-done:
	default:
		t.Error("Done not called for a command answered before the queue")
	}

	h.say(t, "c1", "/cancel")
	if got := h.gw.next(t).Text; !strings.Contains(got, "Cancelled the turn in progress") || !strings.Contains(got, "1 running approved action") {
		t.Fatalf("/cancel answer = %q", got)
	}
	if err := h.eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	if len(b.cancelled) != 1 || b.cancelled[0].Key() != "test:c1" {
		t.Errorf("CancelRuns calls = %v; want one for test:c1", b.cancelled)
	}
	b.mu.Unlock()
	select {
	case a := <-h.gw.ch:
		t.Fatalf("the cancelled turn still said %q", a.Text)
	default:
	}
	// The model is told, and no command reached it.
	h.say(t, "c1", "next")
	h.gw.next(t)
	req := h.fake().Requests()[1]
	var texts []string
	for _, m := range req.Messages {
		texts = append(texts, m.Content)
	}
	all := strings.Join(texts, "\n")
	if !strings.Contains(all, "/cancel") || !strings.Contains(all, "a slow question") {
		t.Errorf("the model was not told of the cancel: %q", all)
	}
	if strings.Contains(all, "/pending") || strings.Contains(all, "/help") {
		t.Errorf("a command reached the model: %q", all)
	}
}

// TestCancelStopsRunningToolCall: the running tool call's context is
// cancelled by /cancel.
func TestCancelStopsRunningToolCall(t *testing.T) {
	started, stopped := make(chan struct{}), make(chan error, 1)
	block := testTool{name: "block", readOnly: true, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return "", ctx.Err()
	}}
	h, _ := brokerHarness(t, harnessOpts{extraTools: toolList(block)})
	h.fake().Push(fakeoai.ToolCalls(fakeoai.Call{ID: "b", Name: "block", Args: `{}`}))
	h.say(t, "c1", "block")
	<-started
	h.say(t, "c1", "/cancel")
	if got := h.gw.next(t).Text; !strings.Contains(got, "Cancelled the turn in progress") {
		t.Fatalf("/cancel answer = %q", got)
	}
	if err := <-stopped; err == nil {
		t.Fatal("tool context not cancelled")
	}
	if err := h.eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(h.fake().Requests()); n != 1 {
		t.Errorf("the model was asked %d times; the cancelled turn must not go on", n)
	}
	h.say(t, "c1", "/cancel")
	if got := h.gw.next(t).Text; !strings.Contains(got, "1 running approved action") || strings.Contains(got, "turn in progress") {
		t.Errorf("second /cancel = %q", got)
	}
}

// TestUnknownAndMistypedCommands: a slash word that is no command is
// answered and never reaches the model or the history, a near miss with
// the right spelling; a path is not a command.
func TestUnknownAndMistypedCommands(t *testing.T) {
	h, _ := brokerHarness(t, harnessOpts{})
	cases := []struct{ text, want string }{
		{"/frobnicate", "unknown command /frobnicate — /help lists them"},
		{"/aprove K7Q2MX9P", "unknown command /aprove — did you mean /approve? /help lists them"},
		{"/stauts@gatehouse_bot", "did you mean /status?"},
		{"/HELP", "Commands:"},
	}
	for _, tc := range cases {
		h.say(t, "c1", tc.text)
		if got := h.gw.next(t).Text; !strings.Contains(got, tc.want) {
			t.Errorf("%q answered %q; want it to contain %q", tc.text, got, tc.want)
		}
	}
	if n := len(h.fake().Requests()); n != 0 {
		t.Fatalf("the model saw %d requests for commands", n)
	}
	h.say(t, "c1", "/tmp/x is full")
	h.gw.next(t)
	reqs := h.fake().Requests()
	if len(reqs) != 1 || reqs[0].LastUser() != "/tmp/x is full" {
		t.Fatalf("a path was taken for a command: %d requests", len(reqs))
	}
	for _, m := range reqs[0].Messages {
		if strings.Contains(m.Content, "K7Q2MX9P") || strings.Contains(m.Content, "frobnicate") {
			t.Fatalf("a command's text reached the model: %q", m.Content)
		}
	}
}

// TestResetForgetsHistory: /reset empties the conversation's history, and
// only that conversation's.
func TestResetForgetsHistory(t *testing.T) {
	h, _ := brokerHarness(t, harnessOpts{})
	h.say(t, "c1", "remember the word pelican")
	h.gw.next(t)
	h.say(t, "c2", "remember the word walrus")
	h.gw.next(t)
	h.say(t, "c1", "/reset")
	if got := h.gw.next(t).Text; !strings.Contains(got, "forgot") {
		t.Fatalf("/reset answer = %q", got)
	}
	h.say(t, "c1", "which word?")
	h.gw.next(t)
	h.say(t, "c2", "which word?")
	h.gw.next(t)
	reqs := h.fake().Requests()
	if n := len(reqs[2].Messages); n != 2 || strings.Contains(fmt.Sprint(reqs[2].Messages), "pelican") {
		t.Errorf("after /reset the model got %d messages: %+v", n, reqs[2].Messages)
	}
	if !strings.Contains(fmt.Sprint(reqs[3].Messages), "walrus") {
		t.Error("/reset in c1 forgot c2's history")
	}
}

// TestStatus: model, gateways, the broker's lines, history size, uptime.
func TestStatus(t *testing.T) {
	h, _ := brokerHarness(t, harnessOpts{})
	h.say(t, "c1", "hello")
	h.gw.next(t)
	h.say(t, "c1", "/status")
	got := h.gw.next(t).Text
	for _, want := range []string{"Model: test-model", "Gateways: test\n", "Pending approvals here: 0 (test:c1)", "History: 2 messages", "Uptime: "} {
		if !strings.Contains(got, want) {
			t.Errorf("/status lacks %q:\n%s", want, got)
		}
	}
	h.say(t, "c1", "/start")
	if got := h.gw.next(t).Text; !strings.HasPrefix(got, "Hello") || !strings.Contains(got, "/cancel") {
		t.Errorf("/start = %q", got)
	}
}

// TestMaxToolCallsPerResponse: of 300 calls in one response, 16 are held,
// the rest get a result saying the limit was reached.
func TestMaxToolCallsPerResponse(t *testing.T) {
	write := testTool{name: "write", run: func(context.Context, json.RawMessage) (string, error) {
		t.Error("a held tool ran")
		return "", nil
	}}
	h, b := brokerHarness(t, harnessOpts{extraTools: toolList(write)})
	calls := make([]fakeoai.Call, 300)
	for i := range calls {
		calls[i] = fakeoai.Call{ID: fmt.Sprint("call_", i), Name: "write", Args: `{}`}
	}
	h.fake().Push(fakeoai.ToolCalls(calls...), fakeoai.Text("some are waiting"))
	h.say(t, "c1", "write 300 files")
	if got := h.gw.next(t).Text; got != "some are waiting" {
		t.Fatalf("reply = %q", got)
	}
	if n := b.holds(); n != core.DefaultMaxToolCalls {
		t.Fatalf("%d calls held; want %d", n, core.DefaultMaxToolCalls)
	}
	msgs := h.fake().Requests()[1].Messages
	results := map[string]string{}
	for _, m := range msgs {
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Content
		}
	}
	if len(results) != 300 {
		t.Fatalf("%d tool results; want one per call id (300)", len(results))
	}
	for i, c := range calls {
		limited := strings.Contains(results[c.ID], "llm.max_tool_calls")
		if limited != (i >= core.DefaultMaxToolCalls) {
			t.Fatalf("call %d result %q", i, results[c.ID])
		}
	}
}

// TestArgsCheckedBeforeGates: a wrongly-cased key is an error result to
// the model; the call is neither run nor held.
func TestArgsCheckedBeforeGates(t *testing.T) {
	ran := false
	write := testTool{name: "write", run: func(context.Context, json.RawMessage) (string, error) {
		ran = true
		return "", nil
	}}
	h, b := brokerHarness(t, harnessOpts{extraTools: toolList(write)})
	h.fake().Push(fakeoai.ToolCalls(fakeoai.Call{ID: "w", Name: "write", Args: `{"TEXT":"x"}`}), fakeoai.Text("fixed"))
	h.say(t, "c1", "write")
	h.gw.next(t)
	if ran || b.holds() != 0 {
		t.Fatalf("a call with a wrongly-cased key ran (%v) or was held (%d)", ran, b.holds())
	}
	if m := lastMessage(t, h.fake(), 1); m.Role != "tool" || !strings.HasPrefix(m.Content, "error:") || !strings.Contains(m.Content, "TEXT") {
		t.Fatalf("tool result = %+v", m)
	}
}

// TestOversizedMessageRefused: nothing stored, nothing sent, the reply
// names the limit.
func TestOversizedMessageRefused(t *testing.T) {
	h, _ := brokerHarness(t, harnessOpts{maxMessage: 1000})
	h.say(t, "c1", strings.Repeat("x", 1001))
	if got := h.gw.next(t).Text; !strings.Contains(got, "1000 bytes") || !strings.Contains(got, "engine.max_message") {
		t.Fatalf("reply = %q", got)
	}
	h.say(t, "c1", strings.Repeat("y", 1000))
	h.gw.next(t)
	reqs := h.fake().Requests()
	if len(reqs) != 1 || len(reqs[0].Messages) != 2 || strings.Contains(reqs[0].Messages[1].Content, "x") {
		t.Fatalf("the oversized message reached the model or the history: %d requests", len(reqs))
	}
}

// TestUserSecretsRedactedBeforeHistory: a secret a user pastes is neither
// sent to the model nor kept.
func TestUserSecretsRedactedBeforeHistory(t *testing.T) {
	const secret = "sk-user-pasted-0123456789"
	h, _ := brokerHarness(t, harnessOpts{secrets: secrets.New(secret)})
	h.say(t, "c1", "my key is "+secret)
	h.gw.next(t)
	h.say(t, "c1", "again")
	h.gw.next(t)
	for i, r := range h.fake().Requests() {
		if strings.Contains(fmt.Sprint(r.Messages), secret) {
			t.Fatalf("request %d carries the pasted secret", i)
		}
	}
}

// TestContextTooLongDropsOldestTurns: the history is halved (never a tool
// call without its result) and the request retried once; a second refusal
// tells the user to /reset.
func TestContextTooLongDropsOldestTurns(t *testing.T) {
	h, _ := brokerHarness(t, harnessOpts{})
	tooLong := fakeoai.Status(400, 0).WithMessage("This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.")
	for i := range 4 {
		h.fake().Push(fakeoai.ToolCalls(fakeoai.Call{ID: fmt.Sprint("e", i), Name: "echo", Args: `{"text":"hi"}`}), fakeoai.Text(fmt.Sprint("answer ", i)))
		h.say(t, "c1", fmt.Sprint("question ", i))
		h.gw.next(t)
	}
	// 4 turns of 4 messages, then the new question: 17.
	h.fake().Push(tooLong, fakeoai.Text("short enough"))
	h.say(t, "c1", "question 4")
	if got := h.gw.next(t).Text; got != "short enough" {
		t.Fatalf("reply = %q", got)
	}
	reqs := h.fake().Requests()
	before, after := reqs[len(reqs)-2].Messages[1:], reqs[len(reqs)-1].Messages[1:]
	if len(before) != 17 || len(after) > len(before)/2 || after[0].Role != "user" || after[len(after)-1].Content != "question 4" {
		t.Fatalf("retry sent %d of %d messages, starting %+v", len(after), len(before), after[0])
	}

	h.fake().Push(tooLong, tooLong)
	h.say(t, "c1", "question 5")
	if got := h.gw.next(t).Text; !strings.Contains(got, "/reset") {
		t.Fatalf("after a second refusal the user was told %q; want a hint to /reset", got)
	}
	if n := len(h.fake().Requests()) - len(reqs); n != 2 {
		t.Errorf("%d requests after the second refusal; want 2 (one retry)", n)
	}
}

// TestStrangersCommandsRefusedAsBefore: the allow list is checked before
// any command: a stranger's /help or /cancel gets the refusal naming their
// identity, and nothing else.
func TestStrangersCommandsRefusedAsBefore(t *testing.T) {
	h, b := brokerHarness(t, harnessOpts{allow: []string{}})
	h.sayAs(t, "test:stranger", "c9", "/help")
	if got := h.gw.next(t).Text; !strings.Contains(got, "test:stranger") || strings.Contains(got, "/cancel") {
		t.Fatalf("a stranger's /help was answered %q", got)
	}
	h.sayAs(t, "test:stranger", "c9", "/cancel")
	h.sayAs(t, "test:boss", "c9", "/status")
	if got := h.gw.next(t).Text; !strings.HasPrefix(got, "Model: ") {
		t.Fatalf("next reply = %q; want the approver's /status (a stranger is told once)", got)
	}
	if err := h.eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.cancelled) != 0 {
		t.Fatal("a stranger's /cancel cancelled runs")
	}
}

// TestToolsCommand: every tool, its origin and the policy's decision, with
// "depends on arguments" where the first matching rule has an args pattern.
func TestToolsCommand(t *testing.T) {
	h := newHarness(t, harnessOpts{
		extraTools: toolList(
			testTool{name: "write"},
			testTool{name: "mcp__files__read_file", readOnly: true},
			testTool{name: "mcp__files__write_file"},
			testTool{name: "mcp__web__fetch", readOnly: true},
		),
		rules: []core.Rule{
			{Tool: "mcp__files__read_*", Decision: core.Allow},
			{Tool: "mcp__files__write_file", Args: regexp.MustCompile(`/tmp/`), Decision: core.Allow},
			{Tool: "write", Decision: core.Deny},
		},
	})
	h.say(t, "c1", "/tools")
	got := h.gw.next(t).Text
	for _, want := range []string{
		"Tools (5):",
		"echo — built-in — allow",
		"write — built-in — deny",
		"mcp__files__read_file — MCP server files — allow",
		"mcp__files__write_file — MCP server files — depends on arguments",
		"mcp__web__fetch — MCP server web — approve", // its read-only hint is not the operator's word
	} {
		if !strings.Contains(got, want) {
			t.Errorf("/tools lacks %q:\n%s", want, got)
		}
	}
}

// TestCancelStopsTheRestOfAResponsesCalls: /cancel during the first call
// of a response stops the turn's other calls too: the ones after it are
// neither run nor held, and each still gets a result in the history, so
// the next request stays a valid sequence.
func TestCancelStopsTheRestOfAResponsesCalls(t *testing.T) {
	started := make(chan struct{})
	block := testTool{name: "block", readOnly: true, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}}
	var mu sync.Mutex
	ran := 0
	mark := testTool{name: "mark", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) {
		mu.Lock() // a tool that never looks at its context
		defer mu.Unlock()
		ran++
		return "marked", nil
	}}
	hist := core.NewMemoryHistory(40)
	h, b := brokerHarness(t, harnessOpts{extraTools: toolList(block, mark), history: hist,
		rules: []core.Rule{{Tool: "echo", Decision: core.NeedsApproval}, {Tool: "*", Decision: core.Allow}}})
	h.fake().Push(fakeoai.ToolCalls(fakeoai.Call{ID: "b", Name: "block", Args: `{}`},
		fakeoai.Call{ID: "m", Name: "mark", Args: `{}`}, fakeoai.Call{ID: "e", Name: "echo", Args: `{"text":"x"}`}))
	h.say(t, "c1", "block, then mark and echo")
	<-started
	h.say(t, "c1", "/cancel")
	if got := h.gw.next(t).Text; !strings.Contains(got, "Cancelled the turn in progress") {
		t.Fatalf("/cancel answer = %q", got)
	}
	if err := h.eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if ran != 0 {
		t.Errorf("a call after the cancelled one ran %d time(s) after /cancel", ran)
	}
	if n := b.holds(); n != 0 {
		t.Errorf("%d call(s) held for approval after /cancel", n)
	}
	msgs, err := hist.Load(context.Background(), "test:c1")
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]bool{}
	for _, m := range msgs {
		if m.Role == "tool" {
			results[m.ToolCallID] = true
		}
	}
	for _, id := range []string{"b", "m", "e"} {
		if !results[id] {
			t.Errorf("call %s has no result in the history after /cancel: %+v", id, msgs)
		}
	}
}
