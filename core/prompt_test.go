package core_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
)

// buttons is a gateway with approval buttons: it records what reaches it
// through each of its abilities.
type buttons struct {
	mu      sync.Mutex
	replies []core.Action
	prompts []string // conv key, text, token and hint of each PromptApproval
	updates []core.ApprovalResolution
	panics  bool // PromptApproval and UpdateApproval panic
}

func (b *buttons) Act(_ context.Context, a core.Action) (core.Result, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.replies = append(b.replies, a)
	return core.Result{}, nil
}

func (b *buttons) PromptApproval(_ context.Context, conv core.Conversation, text string, p core.ApprovalPrompt) error {
	if b.panics {
		panic("buttons boom")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prompts = append(b.prompts, strings.Join([]string{conv.Key(), text, p.Token, p.Summary, p.Hint}, "|"))
	return nil
}

func (b *buttons) UpdateApproval(_ context.Context, r core.ApprovalResolution) {
	if b.panics {
		panic("update boom")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.updates = append(b.updates, r)
}

var (
	_ core.ApprovalPrompter = (*buttons)(nil)
	_ core.ApprovalUpdater  = (*buttons)(nil)
)

// plain is a gateway that can only send text.
type plain struct {
	mu      sync.Mutex
	replies []core.Action
}

func (p *plain) Act(_ context.Context, a core.Action) (core.Result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.replies = append(p.replies, a)
	return core.Result{}, nil
}

var (
	promptConv = core.Conversation{Gateway: "gw", Chat: "1"}
	prompt     = core.ApprovalPrompt{Token: "K7Q2MX9P", Tool: "shell", Summary: "ls", AllowAlways: true,
		Hint: "Reply /approve K7Q2MX9P or /deny K7Q2MX9P [reason].", Expires: time.Date(2026, 5, 6, 12, 15, 0, 0, time.UTC)}
	resolution = core.ApprovalResolution{Token: "K7Q2MX9P", Status: "executed", By: "gw:boss", At: time.Date(2026, 5, 6, 12, 3, 0, 0, time.UTC)}
)

// TestPromptWithoutButtonsIsPlainTextWithTheHint: a gateway that only
// sends text gets the request as one reply, the typed-command hint on its
// last line; a resolution changes nothing there (the notice is the
// broker's own reply).
func TestPromptWithoutButtonsIsPlainTextWithTheHint(t *testing.T) {
	gw := &plain{}
	eng := buildEngine(t, core.Config{Provider: instantText("x")}, "gw", gw)
	if err := eng.Prompt(context.Background(), promptConv, "Approval needed: shell\n`ls`", prompt); err != nil {
		t.Fatal(err)
	}
	eng.Resolved(context.Background(), promptConv, resolution)
	if len(gw.replies) != 1 {
		t.Fatalf("replies %+v, want the request only", gw.replies)
	}
	got := gw.replies[0]
	if want := "Approval needed: shell\n`ls`\n" + prompt.Hint; got.Kind != core.ActionReply || got.Conv != promptConv || got.Text != want {
		t.Fatalf("request %+v, want the reply %q", got, want)
	}
}

// TestPromptWithButtonsUsesTheAbilities: a gateway with buttons gets the
// request through PromptApproval (text and hint apart, secrets redacted),
// never as a duplicate plain reply, and the resolution through
// UpdateApproval.
func TestPromptWithButtonsUsesTheAbilities(t *testing.T) {
	gw := &buttons{}
	redact := func(s string) string { return strings.ReplaceAll(s, "sk-SECRET", "[redacted]") }
	eng := buildEngine(t, core.Config{Provider: instantText("x"), Redact: redact}, "gw", gw)
	p := prompt
	p.Summary = "curl -H sk-SECRET"
	if err := eng.Prompt(context.Background(), promptConv, "Approval needed: curl sk-SECRET", p); err != nil {
		t.Fatal(err)
	}
	eng.Resolved(context.Background(), promptConv, resolution)
	want := "gw:1|Approval needed: curl [redacted]|K7Q2MX9P|curl -H [redacted]|" + prompt.Hint
	if len(gw.prompts) != 1 || gw.prompts[0] != want {
		t.Errorf("prompts %q, want [%q]", gw.prompts, want)
	}
	if len(gw.replies) != 0 {
		t.Errorf("the request also went as plain text: %+v", gw.replies)
	}
	if len(gw.updates) != 1 || gw.updates[0] != resolution {
		t.Errorf("updates %+v, want [%+v]", gw.updates, resolution)
	}
}

// TestPanickingPromptIsRecovered: a gateway whose PromptApproval or
// UpdateApproval panics does not take the process down: the panic is
// logged, Prompt returns an error, and the Engine still works.
func TestPanickingPromptIsRecovered(t *testing.T) {
	gw := &buttons{panics: true}
	logs := &syncLog{}
	eng := buildEngine(t, core.Config{Provider: instantText("x"), Log: zerolog.New(logs)}, "gw", gw)
	err := eng.Prompt(context.Background(), promptConv, "Approval needed: shell", prompt)
	if err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("Prompt error = %v, want a recovered panic", err)
	}
	eng.Resolved(context.Background(), promptConv, resolution)
	for _, want := range []string{"buttons boom", "update boom"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("panic %q not logged:\n%s", want, logs.String())
		}
	}
	if _, err := eng.Act(context.Background(), core.Action{Kind: core.ActionReply, Conv: promptConv, Text: "still here"}); err != nil {
		t.Fatal(err)
	}
}

// TestPromptToUnknownGateway: a request for a conversation whose gateway
// is not registered is an error naming it; a resolution there is ignored.
func TestPromptToUnknownGateway(t *testing.T) {
	eng := buildEngine(t, core.Config{Provider: instantText("x")}, "gw", &plain{})
	conv := core.Conversation{Gateway: "nowhere", Chat: "1"}
	if err := eng.Prompt(context.Background(), conv, "Approval needed", prompt); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("Prompt error = %v", err)
	}
	eng.Resolved(context.Background(), conv, resolution)
}
