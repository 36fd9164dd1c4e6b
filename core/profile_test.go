package core_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// opsProfile returns a profile over test:ops* whose model is served by a
// fake of its own (returned), with its own prompt, the echo tool only, and
// rules.
func opsProfile(t *testing.T, rules ...core.Rule) (core.Profile, *fakeoai.Server) {
	t.Helper()
	f := fakeoai.Start(t)
	p, err := llm.NewOpenAI(llm.OpenAIConfig{Name: "ops", BaseURL: f.URL(), APIKey: "test-key-123456", Model: "ops-model"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rules {
		rules[i].Profile, rules[i].Index = "ops", i+1
	}
	return core.Profile{Name: "ops", Match: []string{"test:ops*"}, Provider: p, Model: "ops-model",
		SystemPrompt: "You are the on-call assistant.", Tools: []string{"ec*"}, Rules: rules}, f
}

// ranTool is a read-only tool that counts its runs.
func ranTool(name string, runs *atomic.Int32) testTool {
	return testTool{name: name, readOnly: true, run: func(context.Context, json.RawMessage) (string, error) {
		runs.Add(1)
		return name + " ran", nil
	}}
}

// TestProfileModelPromptAndTools: a message in a conversation a profile
// matches goes to the profile's provider and model, with its system
// prompt and only its tools; one in a conversation no profile matches
// goes to the top-level provider exactly as without profiles.
func TestProfileModelPromptAndTools(t *testing.T) {
	var runs atomic.Int32
	profile, opsFake := opsProfile(t)
	h := newHarness(t, harnessOpts{extraTools: toolList(ranTool("deploy", &runs)), profiles: core.NewProfiles([]core.Profile{profile})})
	opsFake.Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Text("ops answer") })
	h.fake().Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Text("top answer") })

	h.say(t, "ops1", "status?")
	if got := h.gw.next(t); got.Text != "ops answer" || got.Conv.Chat != "ops1" {
		t.Fatalf("reply in test:ops1 = %q in %s, want the profile's model's", got.Text, got.Conv.Key())
	}
	reqs := opsFake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the profile's provider saw %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Model != "ops-model" || r.Messages[0].Role != "system" || r.Messages[0].Content != "You are the on-call assistant." {
		t.Errorf("profile request: model %q, first message %+v; want ops-model and the profile's prompt", r.Model, r.Messages[0])
	}
	if len(r.Tools) != 1 || r.Tools[0].Name != "echo" {
		t.Errorf("profile request offers %v, want echo only", r.Tools)
	}
	if n := len(h.fake().Requests()); n != 0 {
		t.Errorf("the top-level provider saw %d requests for the profile's conversation", n)
	}

	h.say(t, "general", "hello")
	if got := h.gw.next(t); got.Text != "top answer" {
		t.Fatalf("reply in test:general = %q, want the top-level model's", got.Text)
	}
	top := h.fake().Requests()
	if len(top) != 1 {
		t.Fatalf("the top-level provider saw %d requests, want 1", len(top))
	}
	if top[0].Model != "test-model" || top[0].Messages[0].Content != core.DefaultSystemPrompt || !top[0].HasTool("echo") || !top[0].HasTool("deploy") {
		t.Errorf("top-level request: model %q, prompt %q, tools %v; want as without profiles", top[0].Model, top[0].Messages[0].Content, top[0].Tools)
	}
	if n := len(opsFake.Requests()); n != 1 {
		t.Errorf("the profile's provider saw %d requests, want still 1", n)
	}
}

// TestProfileToolOutsideIsRefusedAsUnknown: a call of a tool the profile
// does not offer never runs; the model is answered as for a tool that
// does not exist, and it runs in a conversation without the profile.
func TestProfileToolOutsideIsRefusedAsUnknown(t *testing.T) {
	var runs atomic.Int32
	profile, opsFake := opsProfile(t)
	h := newHarness(t, harnessOpts{extraTools: toolList(ranTool("deploy", &runs)), profiles: core.NewProfiles([]core.Profile{profile})})
	script := func(f *fakeoai.Server) {
		f.Respond(func(r fakeoai.Request) fakeoai.Step {
			if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
				return fakeoai.Text("tool said: " + last.Content)
			}
			return fakeoai.ToolCalls(fakeoai.Call{Name: "deploy", Args: `{}`})
		})
	}
	script(opsFake)
	script(h.fake())

	h.say(t, "ops1", "deploy it")
	got := h.gw.next(t).Text
	if runs.Load() != 0 {
		t.Fatal("a tool outside the profile ran")
	}
	if want := `tool said: error: unknown tool "deploy" (available: echo)`; got != want {
		t.Errorf("the model was told %q, want %q", got, want)
	}

	h.say(t, "general", "deploy it")
	if got := h.gw.next(t).Text; got != "tool said: deploy ran" || runs.Load() != 1 {
		t.Errorf("without the profile: %q, %d runs; want the tool to run once", got, runs.Load())
	}
}

// TestProfileRuleHoldsWhatTheGlobalRulesAllow: a profile's rule is
// checked before the top-level rules: it holds echo, which they allow.
func TestProfileRuleHoldsWhatTheGlobalRulesAllow(t *testing.T) {
	profile, opsFake := opsProfile(t, core.Rule{Tool: "echo", Decision: core.NeedsApproval})
	broker := &fakeBroker{}
	h := newHarness(t, harnessOpts{holder: broker, profiles: core.NewProfiles([]core.Profile{profile}),
		rules: []core.Rule{{Index: 1, Tool: "*", Decision: core.Allow}}})
	script := func(f *fakeoai.Server) {
		f.Respond(func(r fakeoai.Request) fakeoai.Step {
			if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
				return fakeoai.Text("tool said: " + last.Content)
			}
			return fakeoai.ToolCalls(fakeoai.Call{Name: "echo", Args: `{"text":"hi"}`})
		})
	}
	script(opsFake)
	script(h.fake())

	h.say(t, "ops1", "echo hi")
	if got := h.gw.next(t).Text; got != "tool said: held for a human's approval" {
		t.Fatalf("in the profile's conversation: %q, want the call held", got)
	}
	broker.mu.Lock()
	held := broker.held
	broker.mu.Unlock()
	if len(held) != 1 || held[0].Rule != "profile ops #1 {tool: echo, decision: approve}" {
		t.Fatalf("held %+v, want one call held by the profile's rule", held)
	}

	h.say(t, "general", "echo hi")
	if got := h.gw.next(t).Text; got != "tool said: echo: hi" || broker.holds() != 1 {
		t.Errorf("without the profile: %q (%d held); want echo allowed by the top-level rule", got, broker.holds())
	}
}

// TestProfileTools: /tools lists the profile's tools with the decision
// of its rules; elsewhere every tool with the top-level rules'.
func TestProfileTools(t *testing.T) {
	var runs atomic.Int32
	profile, _ := opsProfile(t, core.Rule{Tool: "echo", Decision: core.NeedsApproval})
	h := newHarness(t, harnessOpts{extraTools: toolList(ranTool("deploy", &runs)), profiles: core.NewProfiles([]core.Profile{profile}),
		rules: []core.Rule{{Index: 1, Tool: "*", Decision: core.Allow}}})
	h.say(t, "ops1", "/tools")
	if got := h.gw.next(t).Text; got != "Tools (1):\necho — built-in — approve" {
		t.Errorf("/tools in the profile:\n%s", got)
	}
	h.say(t, "general", "/tools")
	if got := h.gw.next(t).Text; !strings.Contains(got, "echo — built-in — allow") || !strings.Contains(got, "deploy — built-in — allow") {
		t.Errorf("/tools elsewhere:\n%s", got)
	}
}

// TestProfileBudgetAndStatus: a profile's budget applies in its
// conversations only, and /status names the profile.
func TestProfileBudgetAndStatus(t *testing.T) {
	profile, opsFake := opsProfile(t)
	profile.Budget = &switchBudget{over: true}
	h := newHarness(t, harnessOpts{commands: &fakeBroker{}, profiles: core.NewProfiles([]core.Profile{profile})})
	h.fake().Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Text("top answer") })

	h.say(t, "ops1", "hello")
	if got := h.gw.next(t).Text; !strings.HasPrefix(got, "I can't start on this") {
		t.Errorf("in the profile's conversation over its budget: %q", got)
	}
	if n := len(opsFake.Requests()); n != 0 {
		t.Errorf("the profile's model was called %d times over its budget", n)
	}
	h.say(t, "general", "hello")
	if got := h.gw.next(t).Text; got != "top answer" {
		t.Errorf("in another conversation: %q, want a turn", got)
	}

	h.say(t, "ops1", "/status")
	got := h.gw.next(t).Text
	if !strings.Contains(got, "Model: ops-model\n") || !strings.Contains(got, "Profile: ops\n") {
		t.Errorf("/status in the profile's conversation:\n%s", got)
	}
	h.say(t, "general", "/status")
	if got := h.gw.next(t).Text; !strings.Contains(got, "Model: test-model\n") || !strings.Contains(got, "Profile: none") {
		t.Errorf("/status elsewhere:\n%s", got)
	}
}

// TestProfilesMatch: the first profile that matches wins; a glob over a
// chat matches its threads; Set replaces the list.
func TestProfilesMatch(t *testing.T) {
	ps := core.NewProfiles([]core.Profile{
		{Name: "a", Match: []string{"slack:C0OPS*", "discord:1181*"}},
		{Name: "b", Match: []string{"slack:*"}},
		{Name: "c", Match: []string{"telegram:-100"}},
	})
	for key, want := range map[string]string{
		"slack:C0OPS1": "a", "slack:C0OPS1:1700.1": "a", "discord:118199": "a", "slack:C0DEV": "b",
		"telegram:-100": "c", "telegram:-100:7": "c", "telegram:-1001": "", "console:local": "",
	} {
		conv, err := core.ParseConversation(key)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if p := ps.For(conv); p != nil {
			got = p.Name
		}
		if got != want {
			t.Errorf("%s: profile %q, want %q", key, got, want)
		}
	}
	ps.Set(nil)
	if p := ps.For(core.Conversation{Gateway: "slack", Chat: "C0OPS1"}); p != nil || ps.Any() {
		t.Errorf("after Set(nil): %v", p)
	}
	var none *core.Profiles
	if none.For(core.Conversation{Gateway: "slack", Chat: "x"}) != nil || none.Approvers(core.Conversation{}) != nil {
		t.Error("a nil Profiles has a profile")
	}
}

// TestProfileUnknownToolNamesOnlyTheProfilesTools: a call of a tool that
// does not exist, under a name the profile's globs match, is refused as
// any unknown tool is, naming the tools the profile offers, never the
// others (the registry's own error lists them all).
func TestProfileUnknownToolNamesOnlyTheProfilesTools(t *testing.T) {
	var runs atomic.Int32
	profile, opsFake := opsProfile(t)
	h := newHarness(t, harnessOpts{extraTools: toolList(ranTool("deploy", &runs)), profiles: core.NewProfiles([]core.Profile{profile})})
	opsFake.Respond(func(r fakeoai.Request) fakeoai.Step {
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			return fakeoai.Text("tool said: " + last.Content)
		}
		return fakeoai.ToolCalls(fakeoai.Call{Name: "ecstatic", Args: `{}`})
	})
	h.say(t, "ops1", "go")
	if got, want := h.gw.next(t).Text, `tool said: error: unknown tool "ecstatic" (available: echo)`; got != want {
		t.Errorf("the model was told %q, want %q", got, want)
	}
}

// TestProfileMCPAndSendFileGlobs: a profile's globs over MCP tools
// ("mcp__github__*") offer that server's tools only; another server's
// tool, and send_file when the profile leaves it out, are refused as
// unknown tools, naming only what the profile offers, and never run.
func TestProfileMCPAndSendFileGlobs(t *testing.T) {
	var runs atomic.Int32
	profile, opsFake := opsProfile(t)
	profile.Tools = []string{"echo", "mcp__github__*"}
	h := newHarness(t, harnessOpts{profiles: core.NewProfiles([]core.Profile{profile}),
		rules: []core.Rule{{Index: 1, Tool: "*", Decision: core.Allow}}, extraTools: toolList(
			ranTool("mcp__github__list_issues", &runs), ranTool("mcp__prod__drop_table", &runs), ranTool("send_file", &runs))})
	var call atomic.Value
	opsFake.Respond(func(r fakeoai.Request) fakeoai.Step {
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			return fakeoai.Text("tool said: " + last.Content)
		}
		return fakeoai.ToolCalls(fakeoai.Call{Name: call.Load().(string), Args: `{}`})
	})
	for _, c := range []struct{ tool, want string }{
		{"mcp__prod__drop_table", `tool said: error: unknown tool "mcp__prod__drop_table" (available: echo, mcp__github__list_issues)`},
		{"send_file", `tool said: error: unknown tool "send_file" (available: echo, mcp__github__list_issues)`},
		{"mcp__github__list_issues", "tool said: mcp__github__list_issues ran"},
	} {
		call.Store(c.tool)
		h.say(t, "ops1", "call "+c.tool)
		if got := h.gw.next(t).Text; got != c.want {
			t.Errorf("%s: the model was told %q, want %q", c.tool, got, c.want)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("%d tool runs; want 1, the offered MCP tool's", n)
	}
	last := opsFake.Requests()[0]
	if len(last.Tools) != 2 || !last.HasTool("echo") || !last.HasTool("mcp__github__list_issues") {
		t.Errorf("the profile's request offers %v; want echo and mcp__github__list_issues", last.Tools)
	}
}
