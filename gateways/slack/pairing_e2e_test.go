package slack_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways/slack"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// pairingCode finds the code in a stranger's pairing reply.
var pairingCode = regexp.MustCompile(`pairing code is ([A-Z2-9]{8})\b`)

// TestE2EPairingOnSlack: with gateways.slack.pairing on, a stranger who
// mentions the bot in a channel gets the refusal (to them only) and no code; a stranger's
// direct message gets a code; the approver's /pair, a Slack slash
// command (Slack does not send a message starting with "/" as text), pairs
// them, answered to the approver only; the newcomer is told, and their
// next message reaches the model.
func TestE2EPairingOnSlack(t *testing.T) {
	e := startE2ETuned(t, fakeslack.Options{}, "", func(cfg *config.Config) {
		cfg.Gateways.Section("slack").(*slack.Section).PairingOn = true
	})
	e.ai.Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Text("hello newcomer") })

	crowd := e.sl.InjectMention(channel, "U0CROWD", "let me in", "")
	if e.told(t, "U0CROWD", crowd, "only talk to people on my allow list") {
		t.Errorf("the refusal of a stranger in a channel was posted; want it shown to them only")
	}
	for _, p := range e.sl.Posts(channel) {
		if strings.Contains(p.Text, "pairing code") {
			t.Fatalf("a stranger in a channel was given a pairing code: %q", p.Text)
		}
	}
	for _, p := range e.sl.Ephemerals() {
		if strings.Contains(p.Text, "pairing code") {
			t.Fatalf("a stranger in a channel was given a pairing code: %q", p.Text)
		}
	}

	const stranger = "U0NEWBIE"
	dm := fakeslack.DMChannel(stranger)
	e.sl.InjectDM(stranger, "let me in")
	m := pairingCode.FindStringSubmatch(e.waitPost(t, dm, "pairing code is").Text)
	if m == nil {
		t.Fatal("no code in the stranger's reply")
	}
	e.sl.InjectSlashCommand(fakeslack.SlashCommand{Command: "/pair", Text: m[1], User: owner, Channel: channel})
	testutil.WaitFor(t, "the approver's answer", func() bool {
		for _, p := range e.sl.ResponseURLPosts() {
			if p.ResponseType == "ephemeral" && strings.Contains(p.Text, "Paired slack:"+stranger) {
				return true
			}
		}
		return false
	})
	e.waitPost(t, dm, "you can talk to me now")
	e.sl.InjectDM(stranger, "finally")
	e.waitPost(t, dm, "hello newcomer")
	if n := len(e.ai.Requests()); n != 1 {
		t.Errorf("the model saw %d requests; want 1, the newcomer's message after the pairing", n)
	}
}
