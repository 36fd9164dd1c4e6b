package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestDiscordThroughTheBinary: the binary with a Discord token from the
// environment against the fake. It registers the slash commands, tells a
// stranger their identity in a DM, counts the reply on /metrics, and logs
// nothing that holds the token, even at debug level.
func TestDiscordThroughTheBinary(t *testing.T) {
	t.Parallel()
	const token = "MTk5OTk5.BINARY-discord-token-secret"
	dc := fakediscord.New(fakediscord.Options{Token: token, HeartbeatInterval: 200 * time.Millisecond})
	addr := freeAddr(t)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fmt.Sprintf(`gateways:
  console: {enabled: false}
  discord: {token: ${DISCORD_BOT_TOKEN}, api_url: %q}
hitl: {approvers: ["discord:500"]}
tools: {workspace: ./workspace}
store: {dsn: gatehouse.db}
http: {listen: %q}
log: {level: debug, format: json}
`, dc.URL(), addr))
	var p *botProc
	t.Cleanup(func() {
		// Registered before startBot, so it runs after the bot stopped: the
		// fake outlives the bot, and the output is complete.
		dc.Close()
		if p == nil {
			return
		}
		out := p.stdout() + p.stderr.String()
		if strings.Contains(out, token) || strings.Contains(out, "BINARY-discord-token") {
			t.Errorf("the bot token is in the output:\n%s", out)
		}
	})
	p = startBot(t, dir, baseEnv(dir, "DISCORD_BOT_TOKEN="+token))

	testutil.WaitFor(t, "the slash commands registered", func() bool { return len(dc.Commands("")) == 3 })
	stranger := fakediscord.User{ID: "601", Username: "stranger"}
	ch := dc.DMChannel(stranger.ID)
	dc.InjectMessage(fakediscord.Message{ChannelID: ch, Author: stranger, Content: "hello"})
	testutil.WaitFor(t, "the stranger told their identity", func() bool {
		msgs := dc.Messages(ch)
		return len(msgs) == 1 && strings.Contains(msgs[0].Content, "Your identity is discord:601")
	})
	testutil.WaitFor(t, "the reply counted", func() bool {
		return strings.Contains(metrics(t, addr), `gatehouse_delivery_sent_total{gateway="discord"} 1`)
	})
}
