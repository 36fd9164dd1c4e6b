package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestSkillRequestInApproversDirectMessage: through the binary, with
// hitl.notify empty and slack:U0BOSS among hitl.approvers, a pending
// skill's approval request reaches U0BOSS's direct message (as a held
// call's request reaches the approvers), with Approve and Deny and no
// "Approve always" nor "Approve 30 min" button; U0BOSS's typed "always"
// and "for 30m" are refused, saying why, and the plain /approve enables
// the skill.
func TestSkillRequestInApproversDirectMessage(t *testing.T) {
	t.Parallel()
	const bot, app = "xoxb-1-SKILLREQ-slack-bot-token", "xapp-1-A0FAKE-SKILLREQ-slack-app-token"
	sl := fakeslack.New(fakeslack.Options{BotToken: bot, AppToken: app})
	t.Cleanup(sl.Close)
	dir := t.TempDir()
	cfg := offlineConfig(t)
	for old, repl := range map[string]string{
		"api_url: https://slack.com/api/":   "api_url: " + sl.URL() + "/api/",
		"approvers: [console:local]":        `approvers: [console:local, "slack:U0BOSS"]`,
		"allow: []                       #": "allow: [U0BOSS]                 #",
	} {
		if !strings.Contains(cfg, old) {
			t.Fatalf("the shipped config.yaml no longer has %q; update this test", old)
		}
		cfg = strings.Replace(cfg, old, repl, 1)
	}
	writeFile(t, dir, "config.yaml", cfg+"\nskills:\n  dirs: [skills]\n")
	writeFile(t, dir, "skills/restart-billing/SKILL.md", "---\nname: restart-billing\ndescription: Restart billing.\n---\nRun scripts/restart.sh.\n")
	writeFile(t, dir, "skills/restart-billing/scripts/restart.sh", "systemctl restart billing\n")
	p := startBot(t, dir, baseEnv(dir, "SLACK_BOT_TOKEN="+bot, "SLACK_APP_TOKEN="+app))
	testutil.WaitFor(t, "the socket mode connection", func() bool { return sl.Connections() > 0 })
	dm := fakeslack.DMChannel("U0BOSS")
	find := func(sub string) (fakeslack.Post, bool) {
		for _, post := range sl.Posts(dm) {
			if strings.Contains(post.Text, sub) || strings.Contains(string(post.Blocks), sub) {
				return post, true
			}
		}
		return fakeslack.Post{}, false
	}
	testutil.WaitFor(t, "the skill's request in U0BOSS's direct message", func() bool { _, ok := find("enable_skill"); return ok })
	req, _ := find("enable_skill")
	var labels []string
	for _, b := range req.Buttons() {
		labels = append(labels, b.Text)
	}
	if strings.Join(labels, ",") != "Approve,Deny" || strings.Contains(string(req.Blocks), "always") {
		t.Errorf("the skill's request offers %v; want Approve and Deny only:\n%s", labels, req.Blocks)
	}
	m := regexp.MustCompile(`/approve ([A-Z0-9]{8})`).FindStringSubmatch(string(req.Blocks) + req.Text)
	if m == nil {
		t.Fatalf("no token in the request: %s", req.Blocks)
	}
	sl.InjectDM("U0BOSS", "/approve "+m[1]+" always")
	testutil.WaitFor(t, "the refusal of always", func() bool { _, ok := find("is approved only once"); return ok })
	sl.InjectDM("U0BOSS", "/approve "+m[1]+" for 30m")
	testutil.WaitFor(t, "the refusal of a grant", func() bool {
		n := 0
		for _, post := range sl.Posts(dm) {
			n += strings.Count(post.Text, "is approved only once")
		}
		return n >= 2
	})
	sl.InjectDM("U0BOSS", "/approve "+m[1])
	testutil.WaitFor(t, "the skill enabled", func() bool { _, ok := find("skill restart-billing enabled at digest"); return ok })
	if _, ok := find("Standing allow #"); ok {
		t.Error("a standing allow was added for enable_skill")
	}
	_ = p
}

// TestPolicyKnowsSkillTools: with skills.dirs set, `bot policy test`
// judges skill as the read-only tool it is (allowed), and write_skill and
// enable_skill as always held, even under a rule that allows every tool;
// `bot policy explain` names them in its default line.
func TestPolicyKnowsSkillTools(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t)+"\nskills:\n  dirs: [skills]\n")
	writeFile(t, dir, "allow.yaml", offlineConfig(t)+"\nskills:\n  dirs: [skills]\n")
	writeFile(t, dir, "skills/restart-billing/SKILL.md", "---\nname: restart-billing\ndescription: Restart billing.\n---\nSteps.\n")
	allowAll := strings.Replace(readFile(t, filepath.Join(dir, "allow.yaml")), "  rules:", "  rules:\n    - {tool: \"*\", decision: allow}", 1)
	writeFile(t, dir, "allow.yaml", allowAll)
	for _, cfg := range []string{"config.yaml", "allow.yaml"} {
		for _, c := range []struct {
			tool, args, decision, rule string
			code                       int
		}{
			{"skill", `{"name":"restart-billing"}`, "allow", "", exitOK},
			{"write_skill", `{"name":"x","description":"d","body":"b"}`, "approve", "skills: ", exitApprove},
			{"enable_skill", `{"name":"restart-billing","digest":"abc"}`, "approve", "skills: ", exitApprove},
		} {
			if c.tool == "skill" && cfg == "config.yaml" {
				c.rule = "default: read-only tool"
			}
			r := runOnce(t, dir, baseEnv(dir), "", "policy", "test", "-config", cfg, "-tool", c.tool, "-args", c.args)
			if r.code != c.code || !strings.Contains(r.stdout, "decision:     "+c.decision+"\n") || !strings.Contains(r.stdout, "rule:         "+c.rule) {
				t.Errorf("%s: policy test %s: exit %d; want %d, %s by %q\n%s%s", cfg, c.tool, r.code, c.code, c.decision, c.rule, r.stdout, r.stderr)
			}
		}
	}
	r := runOnce(t, dir, baseEnv(dir), "", "policy", "explain")
	if r.code != exitOK || !strings.Contains(r.stdout, "skill") || !strings.Contains(r.stdout, "write_skill, enable_skill: always approved by a human") {
		t.Errorf("policy explain: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
