package app_test

import (
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestReloadPeople: hitl.people is reloadable like hitl.approvers. With
// self-approval off, telegram:2 approves telegram:1's request while they
// are two persons; after a reload that makes them one person, telegram:2
// can no longer approve telegram:1's request. A reload with an identity in
// two groups is rejected naming hitl.people, and hitl.people is never
// logged as needing a restart.
func TestReloadPeople(t *testing.T) {
	const base = `
gateways: {console: {enabled: false}, telegram: {allow: ["1", "2"]}}
policy: {rules: [{tool: shell, decision: approve}]}
`
	b := startReloadBot(t, base+`hitl: {approvers: ["telegram:1", "telegram:2"], allow_self_approval: false}`)
	tok := approveToken.FindStringSubmatch(b.say("1", "run"))
	if tok == nil {
		t.Fatalf("no request:\n%s", b.gw.sent("telegram:1"))
	}
	wantContains(t, "another person's approval", b.say("2", "/approve "+tok[1]), "Approved: running")
	testutil.WaitFor(t, "the approved run's outcome", func() bool { return strings.Contains(b.gw.sent("telegram:1"), "Approved by telegram:2") })

	err := b.reload(base + `hitl: {approvers: ["telegram:1", "telegram:2"], allow_self_approval: false, people: [["telegram:1", "telegram:2"], ["telegram:2"]]}`)
	if err == nil || !strings.Contains(err.Error(), "hitl.people") {
		t.Errorf("reload with an identity in two groups: %v; want an error naming hitl.people", err)
	}
	if err := b.reload(base + `hitl: {approvers: ["telegram:1", "telegram:2"], allow_self_approval: false, people: [["telegram:1", "telegram:2"]]}`); err != nil {
		t.Fatal(err)
	}
	first := tok[1]
	b.say("1", "run")
	var second string
	testutil.WaitFor(t, "the second request", func() bool {
		for _, m := range approveToken.FindAllStringSubmatch(b.gw.sent("telegram:1"), -1) {
			if m[1] != first {
				second = m[1]
				return true
			}
		}
		return false
	})
	wantContains(t, "the same person's approval after the reload", b.say("2", "/approve "+second), "another approver must approve it")
	wantContains(t, "/status", b.say("2", "/status"), "Approvers: telegram:1 = telegram:2")
	if strings.Contains(b.logs.String(), "hitl.people changed") {
		t.Errorf("hitl.people logged as needing a restart:\n%s", b.logs)
	}
}
