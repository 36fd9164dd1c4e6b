package discord_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways/discord"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// pairingCode finds the code in a stranger's pairing reply.
var pairingCode = regexp.MustCompile(`pairing code is ([A-Z2-9]{8})\b`)

// TestE2EPairingOnDiscord: with gateways.discord.pairing on, a stranger
// who mentions the bot in a guild channel gets the refusal and no code;
// a stranger's direct message gets a code; the approver's typed /pair in
// their own DM pairs them; the newcomer is told, and their next message
// reaches the model.
func TestE2EPairingOnDiscord(t *testing.T) {
	e := startE2EWith(t, func(cfg *config.Config) {
		cfg.Gateways.Section("discord").(*discord.Section).PairingOn = true
	})
	e.ai.Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Text("hello newcomer") })

	crowd := fakediscord.User{ID: "3009", Username: "cal"}
	e.dc.InjectMessage(fakediscord.Message{ChannelID: team, GuildID: guild, Author: crowd, Content: e.mention() + "let me in"})
	e.waitSent(t, team, "only talk to people on my allow list")
	for _, s := range e.dc.Messages(team) {
		if strings.Contains(s.Content, "pairing code") {
			t.Fatalf("a stranger in a guild channel was given a pairing code: %q", s.Content)
		}
	}

	dm := e.dc.DMChannel(stranger.ID)
	e.dc.InjectMessage(fakediscord.Message{ChannelID: dm, Author: stranger, Content: "let me in"})
	m := pairingCode.FindStringSubmatch(e.waitSent(t, dm, "pairing code is").Content)
	if m == nil {
		t.Fatal("no code in the stranger's reply")
	}
	ownerDM := e.dc.DMChannel(owner.ID)
	e.dc.InjectMessage(fakediscord.Message{ChannelID: ownerDM, Author: owner, Content: "/pair " + m[1]})
	e.waitSent(t, ownerDM, "Paired discord:"+stranger.ID)
	e.waitSent(t, dm, "you can talk to me now")
	e.dc.InjectMessage(fakediscord.Message{ChannelID: dm, Author: stranger, Content: "finally"})
	e.waitSent(t, dm, "hello newcomer")
	if n := len(e.ai.Requests()); n != 1 {
		t.Errorf("the model saw %d requests; want 1, the newcomer's message after the pairing", n)
	}
}
