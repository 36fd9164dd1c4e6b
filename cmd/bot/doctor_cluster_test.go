package main

import (
	"strings"
	"testing"
	"time"

	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestDoctorShowsTheCluster: `bot doctor` on a PostgreSQL database that a
// running bot shares says that tools.workspace must be storage every
// instance mounts, and lists the instance alive, the Discord lease it
// holds, the schema version and the server's version; on SQLite it says
// none of it.
func TestDoctorShowsTheCluster(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	const token = "MTk5OTk3.DOCTOR-discord-token-secret"
	dc := fakediscord.New(fakediscord.Options{Token: token, HeartbeatInterval: 200 * time.Millisecond})
	t.Cleanup(dc.Close) // registered first: runs after the bot stopped
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", discordLeaseConfig(dc.URL(), "alpha", freeAddr(t)))
	env := baseEnv(dir, "DISCORD_BOT_TOKEN="+token, "GATEHOUSE_DSN="+dsn)
	startBot(t, dir, env)
	testutil.WaitFor(t, "the bot's session open", func() bool { return dc.Connected() == 1 })

	var out string
	testutil.WaitFor(t, "bot doctor listing the instance and its lease", func() bool {
		r := runOnce(t, dir, env, "", "doctor")
		out = r.stdout + r.stderr
		return strings.Contains(out, "instances alive: alpha (") &&
			strings.Contains(out, "discord:"+dc.Bot().ID+" held by alpha (until ")
	})
	for _, want := range []string{
		"/workspace must be storage every instance mounts, at this same path",
		"(schema version ",
		"server: PostgreSQL ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bot doctor does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "DOCTOR-discord-token") {
		t.Errorf("the token is in bot doctor's output:\n%s", out)
	}

	sqliteDir := t.TempDir()
	writeFile(t, sqliteDir, "config.yaml", "tools: {workspace: ./workspace}\nstore: {dsn: gatehouse.db}\n")
	r := runOnce(t, sqliteDir, baseEnv(sqliteDir), "", "doctor")
	if strings.Contains(r.stdout, "cluster") || strings.Contains(r.stdout, "instances alive") {
		t.Errorf("bot doctor on SQLite shows a cluster:\n%s", r.stdout)
	}
}
