package app_test

import (
	"context"
	"fmt"
	"path/filepath"
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

// reloadBot is a running gatehouse whose configuration file is a string
// the test rewrites before calling Reload.
type reloadBot struct {
	t     *testing.T
	app   *app.App
	ai    *fakeoai.Server
	gw    *recGateway
	inbox gateways.Inbox
	logs  *testutil.SyncBuffer
	dir   string

	mu    sync.Mutex
	yaml  string   // the "file" Load reads
	level []string // log levels set by reloads
}

// reloadYAML is the bot's configuration: sections are the varying part
// (allow list, approvers, policy, budget, schedules, log).
func (b *reloadBot) reloadYAML(sections string) string {
	return fmt.Sprintf(`
llm: {providers: [{name: fake, base_url: %q, api_key: sk-test, model: m}]}
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: ""}
%s
`, b.ai.URL(), filepath.Join(b.dir, "ws"), filepath.Join(b.dir, "gatehouse.db"), sections)
}

// parse reads yaml as config.Load does a file.
func parse(yaml string) (*config.Config, error) {
	return config.Parse([]byte(yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
}

// startReloadBot starts the bot with sections; the model answers "run"
// with a shell call (echo ran-it), a tool result with "done", anything
// else with "an answer".
func startReloadBot(t *testing.T, sections string) *reloadBot {
	t.Helper()
	b := &reloadBot{t: t, ai: fakeoai.Start(t), gw: newRecGateway("telegram"), logs: &testutil.SyncBuffer{}, dir: t.TempDir()}
	b.ai.Respond(func(r fakeoai.Request) fakeoai.Step {
		switch {
		case startsRun(r, "run"):
			return fakeoai.ToolCalls(fakeoai.Call{ID: "c1", Name: "shell", Args: `{"command":"echo ran-it"}`})
		case lastIsToolResult(r, "ran-it"):
			return fakeoai.Text("done")
		}
		return fakeoai.Text("an answer")
	})
	b.yaml = b.reloadYAML(sections)
	cfg, err := parse(b.yaml)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.app, err = app.New(ctx, app.Options{Config: cfg, Log: zerolog.New(b.logs), Secrets: secrets.New("sk-test"),
		Gateways: []gateways.Gateway{b.gw},
		Load: func() (*config.Config, error) {
			b.mu.Lock()
			defer b.mu.Unlock()
			return parse(b.yaml)
		},
		SetLogLevel: func(level string) {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.level = append(b.level, level)
		},
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { b.app.Run(ctx); close(done) }() //nolint:errcheck // ends with ctx
	t.Cleanup(func() { cancel(); <-done; b.app.Close() })
	b.inbox = <-b.gw.inbox
	return b
}

// lastIsToolResult reports whether r ends with a tool result holding s
// (the output of a command that ran, not an earlier one in the history).
func lastIsToolResult(r fakeoai.Request, s string) bool {
	last := len(r.Messages) - 1
	return last >= 0 && r.Messages[last].Role == "tool" && strings.Contains(r.Messages[last].Content, s)
}

// reload rewrites the file with sections and reloads.
func (b *reloadBot) reload(sections string) error {
	b.mu.Lock()
	b.yaml = b.reloadYAML(sections)
	b.mu.Unlock()
	return b.app.Reload(context.Background())
}

// say sends text as telegram:<from> in telegram:<from> and waits for the
// answer, which it returns.
func (b *reloadBot) say(from, text string) string {
	b.t.Helper()
	conv := "telegram:" + from
	b.gw.mu.Lock()
	n := len(b.gw.got[conv])
	b.gw.mu.Unlock()
	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "telegram", Chat: from},
		From: core.Identity(conv), Text: text}
	if err := b.inbox.Submit(context.Background(), s); err != nil {
		b.t.Fatal(err)
	}
	var got string
	testutil.WaitFor(b.t, "the answer to "+text+" in "+conv, func() bool {
		b.gw.mu.Lock()
		defer b.gw.mu.Unlock()
		if len(b.gw.got[conv]) > n {
			got = strings.Join(b.gw.got[conv][n:], "\n")
			return true
		}
		return false
	})
	return got
}

const refused = "only talk to people on my allow list"

// TestReloadAllowListsAndApprovers: a new allow list and new approvers
// apply to the next message; the old ones no longer do.
func TestReloadAllowListsAndApprovers(t *testing.T) {
	b := startReloadBot(t, `
gateways: {console: {enabled: false}, telegram: {allow: ["1", "8"]}}
hitl: {approvers: ["telegram:9"]}`)
	wantContains(t, "1 before", b.say("1", "hello"), "an answer")
	wantContains(t, "2 before", b.say("2", "hello"), refused)
	wantContains(t, "8's /pending before", b.say("8", "/pending"), "Not authorised")

	if err := b.reload(`
gateways: {console: {enabled: false}, telegram: {allow: ["2"]}}
hitl: {approvers: ["telegram:8"]}`); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "2 after", b.say("2", "hello again"), "an answer")
	wantContains(t, "8's /pending after", b.say("8", "/pending"), "No pending")
	if got := b.say("1", "hello again"); !strings.Contains(got, refused) {
		t.Errorf("1 is still allowed after the reload: %q", got)
	}
	if got := b.say("9", "/pending"); !strings.Contains(got, refused) {
		t.Errorf("the old approver still talks after the reload: %q", got)
	}
}

// TestReloadPolicy: a shell call the policy allowed is held after a
// reload that asks approval for it.
func TestReloadPolicy(t *testing.T) {
	const base = `
gateways: {console: {enabled: false}, telegram: {allow: ["1"]}}
hitl: {approvers: ["telegram:9"]}
`
	b := startReloadBot(t, base+`policy: {rules: [{tool: shell, decision: allow}]}`)
	got := b.say("1", "run")
	testutil.WaitFor(t, "the answer after the allowed run", func() bool { return strings.Contains(b.gw.sent("telegram:1"), "done") })
	if strings.Contains(got, "/approve") {
		t.Fatalf("held before the reload: %q", got)
	}
	if err := b.reload(base + `policy: {rules: [{tool: shell, decision: approve}]}`); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the request after the reload", func() bool {
		b.say("1", "run")
		return approveToken.MatchString(b.gw.sent("telegram:1"))
	})
	if n := strings.Count(b.gw.sent("telegram:1"), "done"); n != 1 {
		t.Errorf("the command ran %d times, want once (before the reload)", n)
	}
}

// TestReloadBudgetSchedulesAndLogLevel: a new budget refuses the next
// turn, a new schedule runs, and the log level is handed on.
func TestReloadBudgetSchedulesAndLogLevel(t *testing.T) {
	const base = `
gateways: {console: {enabled: false}, telegram: {allow: ["1"]}}
hitl: {approvers: ["telegram:9"]}
`
	b := startReloadBot(t, base)
	wantContains(t, "before", b.say("1", "hello"), "an answer")
	if err := b.reload(base + `
budget: {daily_tokens: 1}
log: {level: debug}
schedules: [{name: beat, cron: "@every 1s", conversation: "telegram:5", prompt: "tick"}]`); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "after", b.say("1", "hello"), "budget.daily_tokens")
	testutil.WaitFor(t, "a run of the new schedule", func() bool {
		return strings.Contains(b.gw.sent("telegram:5"), "budget") // the budget refuses it too: it ran
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	if strings.Join(b.level, " ") != "debug" {
		t.Errorf("log levels set: %q", b.level)
	}
}

// TestReloadRejectsAnInvalidConfig: a file that does not parse, or that
// does not validate, is rejected with the key named; the running
// configuration stays.
func TestReloadRejectsAnInvalidConfig(t *testing.T) {
	const base = `
gateways: {console: {enabled: false}, telegram: {allow: ["1"]}}
hitl: {approvers: ["telegram:9"]}
`
	b := startReloadBot(t, base+`policy: {rules: [{tool: shell, decision: deny}]}`)
	for _, tt := range []struct{ sections, key string }{
		{base + `policy: {rules: [{tool: shell, decision: allow}]}` + "\nbogus: 1", "bogus"},
		{base + `policy: {rules: [{tool: shell, decision: maybe}]}`, "policy.rules[0]"},
		{base + `policy: {rules: [{tool: shell, args: "(", decision: allow}]}`, "policy.rules[0].args"},
		{base + `schedules: [{name: s, cron: "@every 1s", conversation: "slack:C1", prompt: p}]`, "schedules[0].conversation"},
	} {
		err := b.reload(tt.sections)
		if err == nil || !strings.Contains(err.Error(), tt.key) {
			t.Errorf("reload of a bad %s: %v", tt.key, err)
		}
	}
	if !strings.Contains(b.logs.String(), "config reload rejected") {
		t.Errorf("no rejection logged:\n%s", b.logs)
	}
	b.say("1", "run")
	testutil.WaitFor(t, "the denied call's answer", func() bool { return strings.Contains(b.gw.sent("telegram:1"), "an answer") })
	if strings.Contains(b.gw.sent("telegram:1"), "done") || approveToken.MatchString(b.gw.sent("telegram:1")) {
		t.Errorf("the deny rule is gone after rejected reloads:\n%s", b.gw.sent("telegram:1"))
	}
}

// TestReloadLogsWhatNeedsARestart: changed keys that need a restart are
// logged by name, never with their values, and not applied.
func TestReloadLogsWhatNeedsARestart(t *testing.T) {
	b := startReloadBot(t, `
gateways: {console: {enabled: false}, telegram: {allow: ["1"]}}
hitl: {approvers: ["telegram:9"]}`)
	b.mu.Lock()
	b.yaml = strings.Replace(b.yaml, "api_key: sk-test", "api_key: sk-brand-new-secret, price: {input_per_mtok: 1, output_per_mtok: 2}", 1) +
		"engine: {concurrency: 3}\nhitl: {approvers: [\"telegram:9\"], ttl: 1m}\n"
	b.yaml = strings.Replace(b.yaml, "hitl: {approvers: [\"telegram:9\"]}\n", "", 1)
	b.mu.Unlock()
	if err := b.app.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	logs := b.logs.String()
	for _, key := range []string{"llm.providers[0].api_key", "engine.concurrency", "hitl.ttl"} {
		if !strings.Contains(logs, key+" changed; needs a restart") {
			t.Errorf("%s not logged as needing a restart:\n%s", key, logs)
		}
	}
	for _, never := range []string{"sk-brand-new-secret", "price changed", "hitl.approvers changed"} {
		if strings.Contains(logs, never) {
			t.Errorf("the log holds %q:\n%s", never, logs)
		}
	}
}

// TestConcurrentReloads: reloads from several goroutines are serialised
// (run with -race) and all succeed.
func TestConcurrentReloads(t *testing.T) {
	b := startReloadBot(t, `
gateways: {console: {enabled: false}, telegram: {allow: ["1"]}}
hitl: {approvers: ["telegram:9"]}`)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := b.app.Reload(context.Background()); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() { b.say("1", "hello") })
	}
	wg.Wait()
}
