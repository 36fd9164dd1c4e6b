package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// discordLeaseConfig is instance name's configuration: the Discord fake
// at api, the PostgreSQL store of ${GATEHOUSE_DSN} with a short lease_ttl,
// its health server on listen.
func discordLeaseConfig(api, name, listen string) string {
	return fmt.Sprintf(`gateways:
  console: {enabled: false}
  discord: {token: ${DISCORD_BOT_TOKEN}, api_url: %q}
hitl: {approvers: ["discord:500"]}
tools: {workspace: ./workspace}
store: {driver: postgres, dsn: ${GATEHOUSE_DSN}, lease_ttl: 2s, instance: %s}
http: {listen: %q}
log: {level: debug, format: json}
`, api, name, listen)
}

// TestDiscordSessionUnderLeaseThroughTheBinary: two `bot run`s with one
// Discord token on one PostgreSQL database: only one opens a websocket
// session, so a message is answered once; SIGKILL it, and the other
// opens a session (the lease expires after lease_ttl) and answers a
// message sent afterwards, once.
func TestDiscordSessionUnderLeaseThroughTheBinary(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	const token = "MTk5OTk4.LEASE-discord-token-secret"
	dc := fakediscord.New(fakediscord.Options{Token: token, HeartbeatInterval: 200 * time.Millisecond})
	t.Cleanup(dc.Close) // registered first: runs after the bots stopped
	procs := map[string]*botProc{}
	for _, name := range []string{"a", "b"} {
		dir := t.TempDir()
		writeFile(t, dir, "config.yaml", discordLeaseConfig(dc.URL(), name, freeAddr(t)))
		procs[name] = startBot(t, dir, baseEnv(dir, "DISCORD_BOT_TOKEN="+token, "GATEHOUSE_DSN="+dsn))
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	// query reads one value; an error (the schema not made yet) leaves it.
	query := func(sql string, into any) {
		_ = conn.QueryRow(context.Background(), sql).Scan(into)
	}
	testutil.WaitFor(t, "both instances alive", func() bool {
		var n int
		query(`SELECT count(*) FROM instances`, &n)
		return n == 2
	})
	var holder string
	testutil.WaitFor(t, "one instance holding the Discord lease with a session", func() bool {
		query(`SELECT holder FROM leases WHERE name LIKE 'discord:%'`, &holder)
		return holder != "" && dc.Connected() == 1
	})

	// answeredOnce sends text from a new user and waits for the one reply,
	// then for the reply to a second message: a second instance answering
	// the first would have done so by then.
	user := 700
	answeredOnce := func() {
		t.Helper()
		var chans []string
		for range 2 {
			user++
			u := fakediscord.User{ID: fmt.Sprint(user), Username: fmt.Sprint("user", user)}
			ch := dc.DMChannel(u.ID)
			chans = append(chans, ch)
			dc.InjectMessage(fakediscord.Message{ChannelID: ch, Author: u, Content: "hello"})
			testutil.WaitFor(t, "the reply to "+u.Username, func() bool { return len(dc.Messages(ch)) >= 1 })
		}
		for _, ch := range chans {
			if msgs := dc.Messages(ch); len(msgs) != 1 || !strings.Contains(msgs[0].Content, "Your identity is") {
				t.Fatalf("replies in %s: %+v; want exactly one", ch, msgs)
			}
		}
	}
	answeredOnce()
	if n := dc.Connections(); n != 1 {
		t.Fatalf("%d websocket sessions opened by two instances of one token; want 1", n)
	}

	procs[holder].kill9()
	other := map[string]string{"a": "b", "b": "a"}[holder]
	testutil.WaitFor(t, "the other instance taking the session over", func() bool {
		var h string
		query(`SELECT holder FROM leases WHERE name LIKE 'discord:%'`, &h)
		return h == other && dc.Connections() == 2 && dc.Connected() == 1
	})
	answeredOnce()
	for _, p := range procs {
		if out := p.stdout() + p.stderr.String(); strings.Contains(out, "LEASE-discord-token") {
			t.Errorf("the bot token is in the output:\n%s", out)
		}
	}
}
