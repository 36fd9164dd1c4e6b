package app_test

import (
	"context"
	"encoding/json"
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

// TestMCPEndToEnd runs the bot with Telegram (fake Bot API), the fake
// OpenAI and the stdio fake MCP server, whose env holds a secret and a
// second, broken server: the broken one is logged and the bot runs on; a
// read-only tool a rule allows runs at once and its result (the secret)
// reaches the model redacted; the writing tool is held, approved from
// Telegram, runs exactly once and is audited; no secret is in the logs or
// the model's requests; and no child is left once the bot has stopped.
func TestMCPEndToEnd(t *testing.T) {
	bin, err := fakemcp.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const secret = "mcp-env-secret-QQQQ7777"
	dir := t.TempDir()
	ws := filepath.Join(dir, "mcpws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	mark := fmt.Sprintf("e2e-%d", time.Now().UnixNano())
	callLog := filepath.Join(ws, "calls.jsonl")
	tg := faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	t.Cleanup(tg.Close)
	ai := fakeoai.Start(t)
	ai.Record(true)
	yaml := fmt.Sprintf(`
llm: {providers: [{name: fake, base_url: %q, model: fake-model}]}
gateways:
  console: {enabled: false}
  telegram: {token: %q, api_url: %q, allow: ["42"]}
hitl: {approvers: ["telegram:42"]}
policy:
  rules:
    - {tool: "mcp__fake__lookup", decision: allow}
    - {tool: "mcp__fake__env", decision: allow}
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: ""}
mcp:
  servers:
    - name: fake
      command: %q
      env: {FAKE_MCP_WORKSPACE: %q, FAKE_MCP_CALLS: %q, FAKE_MCP_MARK: %q, FAKE_TOKEN: "${MCP_TOKEN}"}
    - {name: broken, command: %q, env: {FAKE_MCP_FAIL_START: "${MCP_TOKEN}"}}
`, ai.URL(), tg.Token(), tg.URL(), filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"),
		bin, ws, callLog, mark, bin)
	lookup := func(k string) (string, bool) {
		if k == "MCP_TOKEN" {
			return secret, true
		}
		return "", false
	}
	cfg, err := config.Parse([]byte(yaml), lookup, gatewaytable.Specs())
	if err != nil {
		t.Fatal(err)
	}
	sec := secrets.New(cfg.Secrets()...)
	logs := &testutil.SyncBuffer{}
	// The process logger, as cmd/bot builds it: secrets scrubbed.
	log := logging.New(logs, logging.Options{Level: "debug", Format: "json", Secrets: sec})
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Options{Config: cfg, Log: log, Secrets: sec})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }() //nolint:errcheck // ends with ctx
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
			a.Close()
		}
	}
	t.Cleanup(stop)

	testutil.WaitFor(t, "the fake MCP server ready", func() bool {
		return strings.Contains(logs.String(), `"mcp_server":"fake"`) && strings.Contains(logs.String(), "mcp server ready")
	})
	testutil.WaitFor(t, "the broken server's failure logged", func() bool { return strings.Contains(logs.String(), "failed to start") })

	user := faketg.User{ID: 42, FirstName: "Ada"}
	say := func(text, want string) {
		t.Helper()
		before := len(tg.Sent())
		tg.InjectMessage(faketg.Message{From: &user, Chat: faketg.Chat{ID: 42, Type: "private"}, Text: text})
		testutil.WaitFor(t, "the answer "+want, func() bool {
			for _, s := range tg.Sent()[before:] {
				if strings.Contains(s.Plain, want) {
					return true
				}
			}
			return false
		})
	}

	// The broken server leaves the bot answering, with the good server's tools.
	say("/tools", "mcp__fake__write_note — MCP server fake — approve")
	// /status shows each server's state, the broken one's error redacted.
	before := len(tg.Sent())
	say("/status", "MCP servers: fake (stdio) running, 6 tools; broken (stdio) failed: ")
	for _, s := range tg.Sent()[before:] {
		if strings.Contains(s.Plain, secret) {
			t.Errorf("/status shows the MCP server's secret:\n%s", s.Plain)
		}
	}

	// A read-only tool a rule allows: run at once; the secret it returns
	// reaches the model redacted.
	ai.Push(fakeoai.ToolCalls(fakeoai.Call{Name: "mcp__fake__lookup", Args: `{"key":"k"}`},
		fakeoai.Call{Name: "mcp__fake__env", Args: `{"name":"FAKE_TOKEN"}`}), fakeoai.Text("looked up"))
	say("look k up", "looked up")

	// The writing tool is held, approved from Telegram, and runs once.
	ai.Push(fakeoai.ToolCalls(fakeoai.Call{Name: "mcp__fake__write_note", Args: `{"path":"n.txt","text":"hello"}`}), fakeoai.Text("written"))
	before = len(tg.Sent())
	tg.InjectMessage(faketg.Message{From: &user, Chat: faketg.Chat{ID: 42, Type: "private"}, Text: "write a note"})
	req, approve := approvalRequest(t, tg, before, "mcp__fake__write_note")
	if !strings.Contains(req.Plain, `"text": "hello"`) || !strings.Contains(req.Plain, "MCP server fake") {
		t.Errorf("the request does not show the server, tool and arguments:\n%s", req.Plain)
	}
	tg.InjectCallback(faketg.Callback{From: user, ChatID: 42, MessageID: req.MessageID, Data: approve})
	tg.InjectCallback(faketg.Callback{From: user, ChatID: 42, MessageID: req.MessageID, Data: approve}) // a double tap
	testutil.WaitFor(t, "the note written", func() bool {
		b, err := os.ReadFile(filepath.Join(ws, "n.txt"))
		return err == nil && string(b) == "hello"
	})
	// The server writes the note before the bot has its answer: the turn
	// is over once the model's reply to the call's result is sent.
	testutil.WaitFor(t, "the reply after the approved call", func() bool {
		for _, s := range tg.Sent()[before:] {
			if strings.TrimSpace(s.Plain) == "written" {
				return true
			}
		}
		return false
	})

	stop()
	if p := testutil.ProcsWithEnv("FAKE_MCP_MARK=" + mark); len(p) != 0 {
		t.Errorf("MCP children left after shutdown: %v", p)
	}

	counts := map[string]int{}
	b, err := os.ReadFile(callLog)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		counts[fmt.Sprint(m["tool"])]++
	}
	if counts["lookup"] != 1 || counts["env"] != 1 || counts["write_note"] != 1 {
		t.Errorf("calls on the server = %v; want lookup, env and write_note once each", counts)
	}

	st, err := storetable.OpenReadOnly(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	audit, err := st.QueryAudit(context.Background(), record.AuditFilter{Tool: "mcp__fake__write_note"})
	if err != nil {
		t.Fatal(err)
	}
	executed := 0
	for _, e := range audit {
		if e.Outcome == "executed" {
			executed++
		}
	}
	if executed != 1 {
		t.Errorf("audit of write_note = %+v; want one executed entry", audit)
	}

	var all strings.Builder
	for _, r := range ai.Requests() {
		fmt.Fprintf(&all, "%+v\n", r)
	}
	if !strings.Contains(all.String(), "mcp__fake__lookup") || !strings.Contains(all.String(), "value of k") {
		t.Fatalf("the model was not offered the MCP tools or did not get their results:\n%s", all.String())
	}
	if strings.Contains(all.String(), "(unset)") {
		t.Fatal("the server did not have FAKE_TOKEN: the redaction below proves nothing")
	}
	if strings.Contains(all.String(), secret) {
		t.Error("an LLM request holds the MCP server's secret")
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("the logs hold the MCP server's secret")
	}
}

// approvalRequest waits for the request to approve tool among the messages
// the bot sent on Telegram from the before-th, and returns it with its
// approve button's callback data.
func approvalRequest(t *testing.T, tg *faketg.Server, before int, tool string) (faketg.Sent, string) {
	t.Helper()
	var req faketg.Sent
	testutil.WaitFor(t, "the approval request", func() bool {
		for _, s := range tg.Sent()[before:] {
			if strings.Contains(s.Plain, "Approval needed: "+tool) && s.Markup != nil {
				req = s
				return true
			}
		}
		return false
	})
	var approve string
	for _, b := range req.Markup.Buttons() {
		if strings.Contains(strings.ToLower(b.Text), "approve") && approve == "" {
			approve = b.CallbackData
		}
	}
	if approve == "" {
		t.Fatalf("no approve button: %+v", req.Markup)
	}
	return req, approve
}
