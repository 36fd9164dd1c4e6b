package app_test

import (
	"context"
	"strings"
	"testing"

	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// lastRequest returns the fake's last recorded request.
func lastRequest(t *testing.T, f *fakeoai.Server) fakeoai.Request {
	t.Helper()
	reqs := f.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model saw no request")
	}
	return reqs[len(reqs)-1]
}

// toolNames lists the tools a request offered.
func toolNames(r fakeoai.Request) string {
	names := make([]string, len(r.Tools))
	for i, tl := range r.Tools {
		names[i] = tl.Name
	}
	return strings.Join(names, ",")
}

// profileSections allow telegram:1 and :2, allow shell at the top level,
// and give telegram:2 the profile ops: its model, prompt, tools, a rule
// that holds shell, and telegram:7 as its approver.
func profileSections(model, prompt, tools string) string {
	return `
gateways: {console: {enabled: false}, telegram: {allow: ["1", "2"]}}
hitl: {approvers: ["telegram:9"]}
policy: {rules: [{tool: shell, decision: allow}]}
profiles:
  - name: ops
    match: ["telegram:2"]
    providers: [fake]
    model: ` + model + `
    system_prompt: "` + prompt + `"
    tools: ` + tools + `
    policy: {rules: [{tool: shell, decision: approve}]}
    approvers: ["telegram:7"]
`
}

// TestProfilesThroughTheApp: the profile's conversation gets its model,
// prompt and tools, and its rule holds the shell call the top-level rules
// allow, which the profile's approver (on no allow list) approves; another
// conversation is as without profiles; a reload changes the profile for
// the next message.
func TestProfilesThroughTheApp(t *testing.T) {
	b := startReloadBot(t, profileSections("ops-model", "OPS PROMPT", "[shell]"))

	wantContains(t, "telegram:1", b.say("1", "hello"), "an answer")
	r := lastRequest(t, b.ai)
	if r.Model != "m" || !strings.HasPrefix(r.Messages[0].Content, "You are gatehouse") || !r.HasTool("list_dir") || !r.HasTool("shell") {
		t.Errorf("outside the profile: model %q, prompt %q, tools %s; want the top-level ones", r.Model, r.Messages[0].Content, toolNames(r))
	}
	wantContains(t, "telegram:2", b.say("2", "hello"), "an answer")
	r = lastRequest(t, b.ai)
	if r.Model != "ops-model" || r.Messages[0].Content != "OPS PROMPT" || toolNames(r) != "shell" {
		t.Errorf("in the profile: model %q, prompt %q, tools %s; want ops-model, OPS PROMPT, shell", r.Model, r.Messages[0].Content, toolNames(r))
	}
	wantContains(t, "/status in the profile", b.say("2", "/status"), "Model: ops-model (fake)", "Profile: ops\n",
		"Profile approvers (this profile's requests): telegram:7")

	// The top-level rule allows shell for telegram:1; the profile holds it.
	b.say("1", "run")
	testutil.WaitFor(t, "the allowed run's answer", func() bool { return strings.Contains(b.gw.sent("telegram:1"), "done") })
	b.say("2", "run")
	m := approveToken.FindStringSubmatch(b.gw.sent("telegram:2"))
	if m == nil {
		t.Fatalf("the profile's rule did not hold shell:\n%s", b.gw.sent("telegram:2"))
	}
	wantContains(t, "the profile's approver", b.say("7", "/approve "+m[1]), "Approved")
	testutil.WaitFor(t, "the approved run's outcome", func() bool {
		return strings.Contains(b.gw.sent("telegram:2"), "Approved by telegram:7: ")
	})
	wantContains(t, "the profile's approver elsewhere", b.say("7", "/pending"), "Not authorised")

	if err := b.reload(profileSections("ops-model-2", "OPS PROMPT 2", "[shell, list_dir]")); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "after the reload", b.say("2", "/status"), "Model: ops-model-2 (fake)")
	b.say("2", "hello")
	testutil.WaitFor(t, "a request after the reload", func() bool {
		r = lastRequest(t, b.ai)
		return r.LastUser() == "hello" && len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].Content, "OPS PROMPT 2")
	})
	if r.Model != "ops-model-2" || r.Messages[0].Content != "OPS PROMPT 2" || toolNames(r) != "list_dir,shell" && toolNames(r) != "shell,list_dir" {
		t.Errorf("after the reload: model %q, prompt %q, tools %s", r.Model, r.Messages[0].Content, toolNames(r))
	}
}

// TestProfileBudgetThroughTheApp: the profile's conversation cap refuses
// its conversation's next turn, naming its key; a conversation outside
// the profile goes on.
func TestProfileBudgetThroughTheApp(t *testing.T) {
	b := startReloadBot(t, `
gateways: {console: {enabled: false}, telegram: {allow: ["1", "2"]}}
hitl: {approvers: ["telegram:9"]}
profiles: [{name: family, match: ["telegram:2"], budget: {conversation_daily_tokens: 1}}]
`)
	wantContains(t, "the first turn", b.say("2", "hello"), "an answer")
	wantContains(t, "the next turn", b.say("2", "hello"), "profiles[0].budget.conversation_daily_tokens")
	wantContains(t, "outside the profile", b.say("1", "hello"), "an answer")
	wantContains(t, "outside the profile again", b.say("1", "hello"), "an answer")
}

// TestProfileReloadNamingANewProviderIsRejected: providers are built at
// start-up, so a reload whose profile names a provider the bot does not
// run is rejected, naming the key, and the running profile stays.
func TestProfileReloadNamingANewProviderIsRejected(t *testing.T) {
	sections := profileSections("ops-model", "OPS PROMPT", "[shell]")
	b := startReloadBot(t, sections)
	b.mu.Lock()
	b.yaml = strings.Replace(b.yaml, "providers: [{name: fake,", "providers: [{name: other, base_url: \"http://127.0.0.1:1/v1\", api_key: sk-o}, {name: fake,", 1)
	b.yaml = strings.Replace(b.yaml, "providers: [fake]", "providers: [other]", 1)
	b.mu.Unlock()
	err := b.app.Reload(context.Background())
	if err == nil || !strings.Contains(err.Error(), "profiles[0].providers[0]") || !strings.Contains(err.Error(), "restart") {
		t.Fatalf("reload naming a provider that does not run: %v", err)
	}
	b.say("2", "hello")
	if r := lastRequest(t, b.ai); r.Model != "ops-model" || r.Messages[0].Content != "OPS PROMPT" {
		t.Errorf("after the rejected reload: model %q, prompt %q; want the running profile's", r.Model, r.Messages[0].Content)
	}
}
