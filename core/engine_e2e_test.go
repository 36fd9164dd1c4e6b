package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

func TestPlainAnswer(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.fake().Push(fakeoai.Text("Hello, Alice."))
	h.say(t, "c1", "hi")
	if got := h.gw.next(t); got.Text != "Hello, Alice." || got.Conv.Key() != "test:c1" {
		t.Fatalf("reply = %q to %s", got.Text, got.Conv.Key())
	}
	req := h.fake().Requests()[0]
	if req.Messages[0].Role != "system" || req.Messages[1].Content != "hi" || !req.HasTool("echo") {
		t.Fatalf("request = %+v", req)
	}
}

func TestToolCallResultFedBack(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.fake().Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: "call_1", Name: "echo", Args: `{"text":"ping"}`}),
		fakeoai.Text("The tool said ping."),
	)
	h.say(t, "c1", "use the tool")
	if got := h.gw.next(t); got.Text != "The tool said ping." {
		t.Fatalf("reply = %q", got.Text)
	}
	m := lastMessage(t, h.fake(), 1)
	if m.Role != "tool" || m.ToolCallID != "call_1" || m.Content != "echo: ping" {
		t.Fatalf("tool message = %+v", m)
	}
}

func TestTwoToolCallsInOneResponse(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.fake().Push(
		fakeoai.ToolCalls(
			fakeoai.Call{ID: "a", Name: "echo", Args: `{"text":"one"}`},
			fakeoai.Call{ID: "b", Name: "echo", Args: `{"text":"two"}`},
		),
		fakeoai.Text("both done"),
	)
	h.say(t, "c1", "twice")
	if got := h.gw.next(t); got.Text != "both done" {
		t.Fatalf("reply = %q", got.Text)
	}
	msgs := h.fake().Requests()[1].Messages
	a, b := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if a.ToolCallID != "a" || a.Content != "echo: one" || b.ToolCallID != "b" || b.Content != "echo: two" {
		t.Fatalf("tool messages = %+v, %+v", a, b)
	}
	if asst := msgs[len(msgs)-3]; asst.Role != "assistant" || len(asst.ToolCalls) != 2 {
		t.Fatalf("assistant message = %+v", asst)
	}
}

func TestDeniedCallReasonReachesModel(t *testing.T) {
	wipe := testTool{name: "wipe", run: func(context.Context, json.RawMessage) (string, error) {
		t.Error("denied tool ran")
		return "", nil
	}}
	h := newHarness(t, harnessOpts{
		extraTools: toolList(wipe),
		rules:      []core.Rule{{Tool: "wipe", Decision: core.Deny}},
	})
	h.fake().Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: "w", Name: "wipe", Args: `{}`}),
		fakeoai.ToolCalls(fakeoai.Call{ID: "e", Name: "echo", Args: `{"text":"safe"}`}),
		fakeoai.Text("I did the safe thing instead."),
	)
	h.say(t, "c1", "wipe it")
	if got := h.gw.next(t); got.Text != "I did the safe thing instead." {
		t.Fatalf("reply = %q", got.Text)
	}
	if m := lastMessage(t, h.fake(), 1); m.ToolCallID != "w" || !strings.Contains(m.Content, "policy forbids") {
		t.Fatalf("deny reason not fed back: %+v", m)
	}
	if m := lastMessage(t, h.fake(), 2); m.Content != "echo: safe" {
		t.Fatalf("allowed call result = %+v", m)
	}
}

func TestCascadeFallsThrough500And429(t *testing.T) {
	h := newHarness(t, harnessOpts{fakes: 2})
	first, second := h.fakes[0], h.fakes[1]
	first.Push(fakeoai.Status(500, 0))
	second.Push(fakeoai.Text("second answered"))
	h.say(t, "c1", "one")
	if got := h.gw.next(t); got.Text != "second answered" {
		t.Fatalf("after 500: reply = %q", got.Text)
	}
	first.Push(fakeoai.Status(429, time.Second))
	second.Push(fakeoai.Text("second again"))
	h.say(t, "c1", "two")
	if got := h.gw.next(t); got.Text != "second again" {
		t.Fatalf("after 429: reply = %q", got.Text)
	}
	if len(first.Requests()) != 2 || len(second.Requests()) != 2 {
		t.Fatalf("requests: first %d, second %d", len(first.Requests()), len(second.Requests()))
	}
	if !strings.Contains(h.log.String(), `"provider":"p2"`) {
		t.Errorf("log does not say which provider answered:\n%s", h.log)
	}
}

func TestTimeoutTellsUserAndRecovers(t *testing.T) {
	h := newHarness(t, harnessOpts{timeout: 200 * time.Millisecond})
	h.fake().Push(fakeoai.Hang(), fakeoai.Text("back"))
	h.say(t, "c1", "are you there")
	if got := h.gw.next(t); !strings.HasPrefix(got.Text, "Sorry") {
		t.Fatalf("reply after timeout = %q", got.Text)
	}
	h.say(t, "c1", "again")
	if got := h.gw.next(t); got.Text != "back" {
		t.Fatalf("reply after recovery = %q", got.Text)
	}
}

func TestMalformedToolArguments(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.fake().Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: "bad", Name: "echo", Args: `{"text": oops`}),
		fakeoai.Text("sorry, fixed"),
	)
	h.say(t, "c1", "go")
	if got := h.gw.next(t); got.Text != "sorry, fixed" {
		t.Fatalf("reply = %q", got.Text)
	}
	if m := lastMessage(t, h.fake(), 1); m.ToolCallID != "bad" || !strings.HasPrefix(m.Content, "error") {
		t.Fatalf("tool message = %+v", m)
	}
}

func TestStepLimit(t *testing.T) {
	h := newHarness(t, harnessOpts{maxSteps: 3})
	n := 0
	h.fake().Respond(func(fakeoai.Request) fakeoai.Step {
		n++
		return fakeoai.ToolCalls(fakeoai.Call{ID: fmt.Sprint("c", n), Name: "echo", Args: `{"text":"again"}`})
	})
	h.say(t, "c1", "loop forever")
	if got := h.gw.next(t); !strings.Contains(got.Text, "step limit") {
		t.Fatalf("reply = %q", got.Text)
	}
	if got := len(h.fake().Requests()); got != 3 {
		t.Fatalf("LLM asked %d times, want 3", got)
	}
}

func TestPanickingTool(t *testing.T) {
	boom := testTool{name: "boom", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) {
		panic("kaboom")
	}}
	h := newHarness(t, harnessOpts{extraTools: toolList(boom)})
	h.fake().Push(fakeoai.ToolCalls(fakeoai.Call{ID: "b", Name: "boom", Args: `{}`}), fakeoai.Text("the tool crashed"))
	h.say(t, "c1", "boom")
	if got := h.gw.next(t); got.Text != "the tool crashed" {
		t.Fatalf("reply = %q", got.Text)
	}
	if m := lastMessage(t, h.fake(), 1); !strings.Contains(m.Content, "crash") {
		t.Fatalf("tool message = %+v", m)
	}
	if !strings.Contains(h.log.String(), "kaboom") {
		t.Error("panic not logged")
	}
}

func TestConversationsConcurrentEachInOrder(t *testing.T) {
	release := make(chan struct{})
	block := testTool{name: "block", readOnly: true, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		select {
		case <-release:
			return "released", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}}
	h := newHarness(t, harnessOpts{extraTools: toolList(block), concurrency: 4})
	h.fake().Respond(func(req fakeoai.Request) fakeoai.Step {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == "tool":
			return fakeoai.Text("A unblocked")
		case last.Content == "block":
			return fakeoai.ToolCalls(fakeoai.Call{ID: "blk", Name: "block", Args: `{}`})
		}
		return fakeoai.Text("re: " + last.Content)
	})
	h.say(t, "A", "block")
	for i := range 5 {
		h.say(t, "A", fmt.Sprint("a", i))
	}
	// B is answered while A's turn is blocked in a tool.
	for i := range 5 {
		h.say(t, "B", fmt.Sprint("b", i))
		if got := h.gw.next(t); got.Conv.Chat != "B" || got.Text != fmt.Sprint("re: b", i) {
			t.Fatalf("B reply %d = %q in %s", i, got.Text, got.Conv.Key())
		}
	}
	close(release)
	want := []string{"A unblocked", "re: a0", "re: a1", "re: a2", "re: a3", "re: a4"}
	for _, w := range want {
		if got := h.gw.next(t); got.Text != w {
			t.Fatalf("A reply = %q, want %q", got.Text, w)
		}
	}
}

func TestUnknownSenderToldIdentityOnce(t *testing.T) {
	h := newHarness(t, harnessOpts{allow: []string{}})
	h.sayAs(t, "test:stranger", "c9", "hello")
	got := h.gw.next(t)
	if !strings.Contains(got.Text, "test:stranger") {
		t.Fatalf("refusal = %q", got.Text)
	}
	h.sayAs(t, "test:stranger", "c9", "hello again")
	h.fake().Push(fakeoai.Text("hi boss"))
	h.sayAs(t, "test:boss", "c9", "hello") // approvers may always talk
	if got := h.gw.next(t); got.Text != "hi boss" {
		t.Fatalf("second reply = %q (stranger must be told only once)", got.Text)
	}
	if n := len(h.fake().Requests()); n != 1 {
		t.Fatalf("LLM saw %d requests, want 1 (the stranger's text must not reach it)", n)
	}
}

func TestNeedsApprovalWithoutBrokerIsRefused(t *testing.T) {
	ran := false
	write := testTool{name: "write", run: func(context.Context, json.RawMessage) (string, error) {
		ran = true
		return "", nil
	}}
	h := newHarness(t, harnessOpts{extraTools: toolList(write)})
	h.fake().Push(fakeoai.ToolCalls(fakeoai.Call{ID: "w", Name: "write", Args: `{}`}), fakeoai.Text("needs approval"))
	h.say(t, "c1", "write")
	h.gw.next(t)
	if ran {
		t.Fatal("a non-read-only tool ran without approval")
	}
	if m := lastMessage(t, h.fake(), 1); !strings.Contains(m.Content, "approval") {
		t.Fatalf("tool message = %+v", m)
	}
}

func TestSecretsNeverReachLLMOrChat(t *testing.T) {
	const secret = "tg-secret-value-42"
	leak := testTool{name: "leak", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) {
		return "TOKEN=" + secret, nil
	}}
	h := newHarness(t, harnessOpts{extraTools: toolList(leak), secrets: secrets.New(secret)})
	h.fake().Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: "l", Name: "leak", Args: `{}`}),
		fakeoai.Text("the token is "+secret),
		fakeoai.Text("I can't share that."),
	)
	h.say(t, "c1", "cat the env")
	if got := h.gw.next(t); got.Text != "I can't share that." {
		t.Fatalf("reply = %q", got.Text)
	}
	if m := lastMessage(t, h.fake(), 1); strings.Contains(m.Content, secret) || !strings.Contains(m.Content, secrets.Mask) {
		t.Fatalf("tool output not redacted: %q", m.Content)
	}
	if m := lastMessage(t, h.fake(), 2); !strings.Contains(m.Content, "secret") {
		t.Fatalf("reply refusal not fed back: %+v", m)
	}
	if strings.Contains(h.log.String(), secret) {
		t.Fatal("secret in log")
	}
}

// stubCommands claims messages starting with "/cmd".
type stubCommands struct{ seen chan core.Signal }

func (s stubCommands) HandleCommand(_ context.Context, sig core.Signal) bool {
	if !regexp.MustCompile(`^/cmd\b`).MatchString(sig.Text) {
		return false
	}
	s.seen <- sig
	return true
}

func TestCommandsNeverReachLLM(t *testing.T) {
	cmds := stubCommands{seen: make(chan core.Signal, 1)}
	h := newHarness(t, harnessOpts{commands: cmds})
	h.say(t, "c1", "/cmd x")
	select {
	case <-cmds.seen:
	case <-time.After(waitFor):
		t.Fatal("command not handled")
	}
	if err := h.eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(h.fake().Requests()); n != 0 {
		t.Fatalf("LLM saw %d requests for a command", n)
	}
}
