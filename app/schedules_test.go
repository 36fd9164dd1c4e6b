package app_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// recGateway records what it is asked to send, per conversation, and
// hands the test its inbox. It poses as the table gateway name.
type recGateway struct {
	name  string
	inbox chan gateways.Inbox

	mu  sync.Mutex
	got map[string][]string // conversation key → texts sent there
}

func newRecGateway(name string) *recGateway {
	return &recGateway{name: name, inbox: make(chan gateways.Inbox, 1), got: map[string][]string{}}
}

func (g *recGateway) Name() string { return g.name }

func (g *recGateway) Run(ctx context.Context, inbox gateways.Inbox) error {
	g.inbox <- inbox
	<-ctx.Done()
	return nil
}

func (g *recGateway) Act(_ context.Context, a core.Action) (core.Result, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.got[a.Conv.Key()] = append(g.got[a.Conv.Key()], a.Text)
	return core.Result{}, nil
}

// sent returns everything sent to conv, joined.
func (g *recGateway) sent(conv string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return strings.Join(g.got[conv], "\n---\n")
}

var approveToken = regexp.MustCompile(`/approve ([A-Z0-9]+)`)

// TestScheduleRunHeldApprovedElsewhere: an "@every 2s" schedule runs its
// prompt in a telegram conversation whose allow list is closed (the
// configuration is the schedule's authority); the shell call the model
// proposes is held, the request goes to that conversation and to the
// hitl.notify conversation on discord; while it waits, the next runs are
// skipped and logged; an approver on discord approves it; the command
// runs, the model finishes the job in the telegram conversation, and the
// schedule runs again.
func TestScheduleRunHeldApprovedElsewhere(t *testing.T) {
	const prompt = "check the disk"
	ai := fakeoai.Start(t)
	isPrompt := func(r fakeoai.Request) bool { return startsRun(r, prompt) }
	ai.Push(fakeoai.ToolCalls(fakeoai.Call{ID: "c1", Name: "shell", Args: `{"command":"echo disk-ok"}`}).When(isPrompt))
	ai.Respond(func(r fakeoai.Request) fakeoai.Step {
		switch {
		case isPrompt(r):
			return fakeoai.Text("second run")
		case requestHolds(r, "disk-ok"):
			return fakeoai.Text("the disk is fine")
		}
		return fakeoai.Text("it awaits approval")
	})
	dir := t.TempDir()
	yaml := fmt.Sprintf(`
llm: {providers: [{name: fake, base_url: %q, api_key: sk-test, model: m}]}
gateways: {console: {enabled: false}, telegram: {allow: []}}
hitl: {approvers: ["discord:boss"], notify: ["discord:ops"]}
schedules:
  - {name: disk, cron: "@every 2s", conversation: "telegram:100", prompt: %q}
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: ""}
`, ai.URL(), prompt, filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"))
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	if err != nil {
		t.Fatal(err)
	}
	tg, dc := newRecGateway("telegram"), newRecGateway("discord")
	logs := &testutil.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Options{Config: cfg, Log: zerolog.New(logs), Secrets: secrets.New("sk-test"),
		Gateways: []gateways.Gateway{tg, dc}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		a.Close()
	})
	<-tg.inbox
	dcInbox := <-dc.inbox

	testutil.WaitFor(t, "the held request on discord:ops", func() bool { return approveToken.MatchString(dc.sent("discord:ops")) })
	if !strings.Contains(tg.sent("telegram:100"), "/approve") {
		t.Errorf("the request did not reach the schedule's conversation; telegram:100 got:\n%s", tg.sent("telegram:100"))
	}
	testutil.WaitFor(t, "a skipped run logged while the call waits", func() bool {
		return strings.Contains(logs.String(), "run skipped") && strings.Contains(logs.String(), `"schedule":"disk"`)
	})
	if n := countPrompts(ai); n != 1 {
		t.Fatalf("the model saw the prompt %d times while the first run waited on its approval; want 1", n)
	}

	tok := approveToken.FindStringSubmatch(dc.sent("discord:ops"))[1]
	err = dcInbox.Submit(ctx, core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "discord", Chat: "ops"},
		From: "discord:boss", Text: "/approve " + tok, MessageID: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the model's answer after the run in telegram:100", func() bool {
		return strings.Contains(tg.sent("telegram:100"), "the disk is fine")
	})
	testutil.WaitFor(t, "the next run once the first has ended", func() bool { return countPrompts(ai) >= 2 })
	if strings.Contains(tg.sent("telegram:100"), "allow list") {
		t.Errorf("a schedule's run was refused by the allow list:\n%s", tg.sent("telegram:100"))
	}
}

func countPrompts(ai *fakeoai.Server) int {
	n := 0
	for _, r := range ai.Requests() {
		if startsRun(r, "check the disk") {
			n++
		}
	}
	return n
}

// requestHolds reports whether a message of r holds s: the approved
// command's output reaches the model only once it has run.
func requestHolds(r fakeoai.Request, s string) bool {
	for _, m := range r.Messages {
		if strings.Contains(m.Content, s) {
			return true
		}
	}
	return false
}

// startsRun reports whether r is the first request of a run of prompt: its
// last message is the prompt (later steps end with tool results).
func startsRun(r fakeoai.Request, prompt string) bool {
	last := len(r.Messages) - 1
	return last >= 0 && r.Messages[last].Role == "user" && r.Messages[last].Content == prompt
}
