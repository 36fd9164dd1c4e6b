package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/app/storetable"
	"github.com/gatehouse-bot/gatehouse/config"
	fakemcp "github.com/gatehouse-bot/gatehouse/internal/fake/mcp"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/logging"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// mcpBot is a running bot with Telegram (fake Bot API), the fake OpenAI
// and the stdio fake MCP server "fake" with its tool await, whose calls
// the policy allows unless they need approval, and hang's.
type mcpBot struct {
	cfg     *config.Config
	tg      *faketg.Server
	ai      *fakeoai.Server
	logs    *testutil.SyncBuffer
	ws      string // the MCP server's workspace, where await looks
	callLog string
	mark    string // in the MCP children's environment
	cancel  context.CancelFunc
	done    chan struct{} // closed when Run has returned
}

// startMCPBot starts the bot (grace: app.Options.Grace; approve: await's
// calls are held for approval) and waits for the MCP server's tools.
func startMCPBot(t *testing.T, grace time.Duration, approve bool) *mcpBot {
	t.Helper()
	bin, err := fakemcp.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := &mcpBot{ws: filepath.Join(dir, "mcpws"), mark: fmt.Sprintf("drain-%d", time.Now().UnixNano()), done: make(chan struct{})}
	if err := os.MkdirAll(b.ws, 0o700); err != nil {
		t.Fatal(err)
	}
	b.callLog = filepath.Join(b.ws, "calls.jsonl")
	b.tg = faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	t.Cleanup(b.tg.Close)
	b.ai = fakeoai.Start(t)
	b.ai.Record(true)
	await := "allow"
	if approve {
		await = "approve"
	}
	yaml := fmt.Sprintf(`
llm: {providers: [{name: fake, base_url: %q, model: fake-model}]}
gateways:
  console: {enabled: false}
  telegram: {token: %q, api_url: %q, allow: ["42"]}
hitl: {approvers: ["telegram:42"]}
policy:
  rules:
    - {tool: "mcp__fake__await", decision: %s}
    - {tool: "mcp__fake__hang", decision: allow}
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: ""}
mcp:
  servers:
    - name: fake
      command: %q
      env: {FAKE_MCP_WORKSPACE: %q, FAKE_MCP_CALLS: %q, FAKE_MCP_MARK: %q, FAKE_MCP_AWAIT: "1"}
`, b.ai.URL(), b.tg.Token(), b.tg.URL(), await, filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"),
		bin, b.ws, b.callLog, b.mark)
	if b.cfg, err = config.Parse([]byte(yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs()); err != nil {
		t.Fatal(err)
	}
	sec := secrets.New(b.cfg.Secrets()...)
	b.logs = &testutil.SyncBuffer{}
	log := logging.New(b.logs, logging.Options{Level: "debug", Format: "json", Secrets: sec})
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	a, err := app.New(ctx, app.Options{Config: b.cfg, Log: log, Secrets: sec, Grace: grace})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { a.Run(ctx); close(b.done) }() //nolint:errcheck // ends with ctx
	t.Cleanup(func() {
		cancel()
		<-b.done
		a.Close()
		if p := testutil.ProcsWithEnv("FAKE_MCP_MARK=" + b.mark); len(p) != 0 {
			t.Errorf("MCP children left after shutdown: %v", p)
		}
	})
	testutil.WaitFor(t, "the fake MCP server ready", func() bool {
		return strings.Contains(b.logs.String(), "mcp server ready")
	})
	return b
}

// callOnServer starts a turn whose model calls the tool with args, and
// waits until the MCP server has the call.
func (b *mcpBot) callOnServer(t *testing.T, tool, args, then string) {
	t.Helper()
	b.ai.Push(fakeoai.ToolCalls(fakeoai.Call{Name: "mcp__fake__" + tool, Args: args}), fakeoai.Text(then))
	user := faketg.User{ID: 42, FirstName: "Ada"}
	b.tg.InjectMessage(faketg.Message{From: &user, Chat: faketg.Chat{ID: 42, Type: "private"}, Text: "call " + tool})
	testutil.WaitFor(t, "the MCP server to have the call of "+tool, func() bool {
		got, _ := os.ReadFile(b.callLog)
		return strings.Contains(string(got), `"tool":"`+tool+`"`)
	})
}

// stopped waits for Run to return.
func (b *mcpBot) stopped(t *testing.T) {
	t.Helper()
	testutil.WaitFor(t, "app.Run to return", func() bool {
		select {
		case <-b.done:
			return true
		default:
			return false
		}
	})
	if p := testutil.ProcsWithEnv("FAKE_MCP_MARK=" + b.mark); len(p) != 0 {
		t.Errorf("MCP children left after shutdown: %v", p)
	}
}

// audited returns the audit's outcomes of the MCP tool, once Run has
// returned.
func (b *mcpBot) audited(t *testing.T, tool string) []string {
	t.Helper()
	st, err := storetable.OpenReadOnly(context.Background(), b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	audit, err := st.QueryAudit(context.Background(), record.AuditFilter{Tool: "mcp__fake__" + tool})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range audit {
		out = append(out, e.Outcome)
	}
	return out
}

// TestMCPCallInFlightAtShutdownFinishesInTheGrace: a turn's MCP call is
// on the server when the bot is told to stop; once the bot's input has
// stopped, the call is answered: its result reaches the model within the
// turn's grace period, the reply is sent, the call is audited executed,
// and the bot exits with no MCP child left. The MCP sessions used to end
// with the bot's context, under the call: the audit said failed and the
// model never had the result.
func TestMCPCallInFlightAtShutdownFinishesInTheGrace(t *testing.T) {
	b := startMCPBot(t, 0, false)
	b.callOnServer(t, "await", `{"file":"go"}`, "the answer after the await")
	b.cancel() // SIGTERM: input stops, the grace period begins
	testutil.WaitFor(t, "the Telegram gateway to stop polling", func() bool {
		return strings.Contains(b.logs.String(), "stopped polling")
	})
	if err := os.WriteFile(filepath.Join(b.ws, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	b.stopped(t)

	sent := false
	for _, s := range b.tg.Sent() {
		sent = sent || strings.Contains(s.Plain, "the answer after the await")
	}
	if !sent {
		t.Errorf("the turn's reply was not sent; sent: %+v", b.tg.Sent())
	}
	var result string
	for _, r := range b.ai.Requests() {
		for _, m := range r.Messages {
			if m.Role == "tool" {
				result += m.Content + "\n"
			}
		}
	}
	if !strings.Contains(result, "released by go") {
		t.Errorf("the model did not get the call's result; tool messages:\n%s", result)
	}
	if got := b.audited(t, "await"); len(got) != 1 || got[0] != "executed" {
		t.Errorf("audit of await = %v; want [executed]", got)
	}
}

// TestMCPCallPastTheGraceEndsAtShutdown: an MCP call that never answers
// does not hold the bot past its grace: the turn is cancelled, the call
// with it (the server is told), and the bot exits with no MCP child left.
func TestMCPCallPastTheGraceEndsAtShutdown(t *testing.T) {
	b := startMCPBot(t, 200*time.Millisecond, false)
	b.callOnServer(t, "hang", `{}`, "never sent")
	b.cancel()
	b.stopped(t)
	if !strings.Contains(b.logs.String(), "cancelling turns still running at shutdown") {
		t.Errorf("the turn was not cut at the end of the grace:\n%s", b.logs.String())
	}
	got, err := os.ReadFile(b.callLog)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"cancelled":true`) {
		t.Errorf("the server was not told the call was cancelled; calls:\n%s", got)
	}
	if got := b.audited(t, "hang"); len(got) != 1 || got[0] != "failed" {
		t.Errorf("audit of hang = %v; want [failed]", got)
	}
}

// TestMCPApprovedCallInFlightAtShutdownFinishesInTheGrace: an approved
// MCP call is running in the broker when the bot is told to stop; it is
// answered once the bot's input has stopped, within the broker's grace,
// and is audited executed, not failed: the MCP sessions stay up until the
// broker's runs have ended too.
func TestMCPApprovedCallInFlightAtShutdownFinishesInTheGrace(t *testing.T) {
	b := startMCPBot(t, 0, true)
	b.ai.Push(fakeoai.ToolCalls(fakeoai.Call{Name: "mcp__fake__await", Args: `{"file":"go"}`}),
		fakeoai.Text("asked for approval"), fakeoai.Text("the answer after the approval"))
	user := faketg.User{ID: 42, FirstName: "Ada"}
	b.tg.InjectMessage(faketg.Message{From: &user, Chat: faketg.Chat{ID: 42, Type: "private"}, Text: "await with approval"})
	req, approve := approvalRequest(t, b.tg, 0, "mcp__fake__await")
	b.tg.InjectCallback(faketg.Callback{From: user, ChatID: 42, MessageID: req.MessageID, Data: approve})
	testutil.WaitFor(t, "the MCP server to have the approved call", func() bool {
		got, _ := os.ReadFile(b.callLog)
		return strings.Contains(string(got), `"tool":"await"`)
	})
	b.cancel()
	testutil.WaitFor(t, "the Telegram gateway to stop polling", func() bool {
		return strings.Contains(b.logs.String(), "stopped polling")
	})
	if err := os.WriteFile(filepath.Join(b.ws, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	b.stopped(t)
	got := b.audited(t, "await")
	executed := 0
	for _, o := range got {
		if o == "executed" {
			executed++
		}
		if o == "failed" || o == "interrupted" {
			t.Errorf("audit of await has %q: %v", o, got)
		}
	}
	if executed != 1 {
		t.Errorf("audit of await = %v; want one executed", got)
	}
}
