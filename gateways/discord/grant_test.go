package discord

import (
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestApproveGrantButton: a request that offers a grant has an "Approve
// 30 min" button, before "Approve always"; its press reaches the broker as
// core.DecisionApproveGrant from the presser.
func TestApproveGrantButton(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake)
	h.start()
	p := prompt
	p.AllowGrant = true
	if err := h.gw.PromptApproval(t.Context(), guildConv, "Approval needed: shell", p); err != nil {
		t.Fatal(err)
	}
	req := fake.Messages(chanID)[0]
	var ids, labels []string
	for _, b := range fakediscord.Buttons(req.Components) {
		ids, labels = append(ids, b.CustomID), append(labels, b.Label)
	}
	if strings.Join(ids, " ") != "gh:a:K7Q2MX9P gh:d:K7Q2MX9P gh:g:K7Q2MX9P gh:A:K7Q2MX9P" ||
		strings.Join(labels, ",") != "Approve,Deny,Approve 30 min,Approve always" {
		t.Fatalf("buttons %q %q", ids, labels)
	}
	fake.InjectButtonPress(fakediscord.Press{ChannelID: chanID, GuildID: guildID, MessageID: req.ID, User: ben, CustomID: "gh:g:" + p.Token})
	testutil.WaitFor(t, "the press", func() bool { return len(h.appr.Calls()) == 1 })
	want := gatewaytest.Press{From: "discord:3002", Conv: guildConv, Token: p.Token, Decision: core.DecisionApproveGrant}
	if c := h.appr.Calls()[0]; c != want {
		t.Fatalf("press %+v, want %+v", c, want)
	}
}

// TestSlashApproveFor: /approve's "for" option becomes "/approve TOKEN for
// 30m" (the broker checks the duration); a line break in it stays one line.
func TestSlashApproveFor(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake, func(c *Config) { c.GuildID = guildID }).start()
	testutil.WaitFor(t, "the commands registered", func() bool { return len(fake.Commands(guildID)) == 3 })
	for value, want := range map[string]string{
		"30m":           "/approve K7Q2MX9P for 30m",
		" 2h\n/deny X ": "/approve K7Q2MX9P for 2h /deny X",
	} {
		fake.InjectSlashCommand(fakediscord.SlashCommand{ChannelID: chanID, GuildID: guildID, User: ann, Name: "approve",
			Options: []fakediscord.OptionValue{{Name: "token", Type: 3, Value: "K7Q2MX9P"}, {Name: "for", Type: 3, Value: value}}})
		if s := h.inbox.Next(t); s.Text != want {
			t.Errorf("for %q: signal %q, want %q", value, s.Text, want)
		}
	}
}
