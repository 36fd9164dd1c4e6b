package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-bot/gatehouse/app/storetable"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// docSection returns the text of a page of the docs (a path from the
// module's root, such as docs/postgresql.md) from the heading title to the
// next heading of the same or a higher level.
func docSection(t *testing.T, page, title string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(page)))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "\n"+title+"\n")
	if i < 0 {
		t.Fatalf("%s has no heading %q", page, title)
	}
	level := len(title) - len(strings.TrimLeft(title, "#"))
	rest := doc[i+len(title)+2:]
	if j := regexp.MustCompile(fmt.Sprintf(`(?m)^#{1,%d} `, level)).FindStringIndex(rest); j != nil {
		rest = rest[:j[0]]
	}
	return rest
}

// fencedBlocks returns the bodies of the section's code blocks of one
// language, in order.
func fencedBlocks(section, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestReadmeTwoInstancesByHand follows "By hand: two `bot run`s" of
// docs/postgresql.md (once the README's) as a new user would, on a
// PostgreSQL server and the fake Telegram: its SQL statements make the role and the database (under
// names of the test's own), its YAML is the configuration's store, tools
// and http (with a Telegram gateway added), its DSN is the one the
// instances are given (the server's host, port and sslmode put in), and
// its one-machine commands start the two instances, each from its own
// directory, with the environment they set. Both run (the second was
// stopped by `bind: address already in use` on http.listen before the
// docs gave it a port of its own), both are ready, and /status lists
// both; a message is answered once.
func TestReadmeTwoInstancesByHand(t *testing.T) {
	t.Parallel()
	server := pgtest.Server(t)
	section := docSection(t, "docs/postgresql.md", "## By hand: two `bot run`s")

	// The SQL, with the role and the database renamed for this test.
	sqls := fencedBlocks(section, "sql")
	if len(sqls) != 1 {
		t.Fatalf("want one sql block in the section, found %d", len(sqls))
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])
	role, db := "readme_bot_"+suffix, "readme_gatehouse_"+suffix
	botWord, gatehouseWord := regexp.MustCompile(`\bbot\b`), regexp.MustCompile(`\bgatehouse\b`)
	rename := func(stmt string) string {
		return gatehouseWord.ReplaceAllString(botWord.ReplaceAllString(stmt, role), db)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, stmt := range []string{"DROP DATABASE IF EXISTS " + db + " WITH (FORCE)", "DROP ROLE IF EXISTS " + role} {
			if _, err := admin.Exec(ctx, stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
		admin.Close(ctx)
	})
	for _, stmt := range strings.Split(sqls[0], ";") {
		if stmt = strings.TrimSpace(stmt); stmt == "" {
			continue
		}
		renamed := rename(stmt)
		if renamed == stmt {
			t.Fatalf("README statement %q names neither the role bot nor the database gatehouse", stmt)
		}
		if _, err := admin.Exec(ctx, renamed); err != nil {
			t.Fatalf("README statement %q: %v", stmt, err)
		}
	}

	// The commands: the DSN exported, and the one-machine lines.
	shs := fencedBlocks(section, "sh")
	if len(shs) != 2 {
		t.Fatalf("want two sh blocks in the section (two machines, one machine), found %d", len(shs))
	}
	m := regexp.MustCompile(`(?m)^export GATEHOUSE_DSN='([^']+)'`).FindStringSubmatch(shs[0])
	if m == nil {
		t.Fatalf("the first sh block exports no GATEHOUSE_DSN:\n%s", shs[0])
	}
	dsn, err := url.Parse(m[1])
	if err != nil {
		t.Fatalf("the README's DSN %q: %v", m[1], err)
	}
	srv, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	if dsn.User.Username() != "bot" || passwordOf(dsn) != "secret" || dsn.Path != "/gatehouse" {
		t.Fatalf("the README's DSN %q is not the role and database its SQL makes (bot, secret, gatehouse)", m[1])
	}
	dsn.User = url.UserPassword(role, "secret")
	dsn.Host, dsn.Path, dsn.RawQuery = srv.Host, "/"+db, srv.RawQuery
	type instance struct{ dir, name, listen string }
	var instances []instance
	root := t.TempDir()
	for _, m := range regexp.MustCompile(`(?m)^cd (\w+) && ((?:\w+=\S+ )+)bot run\s*$`).FindAllStringSubmatch(shs[1], -1) {
		in := instance{dir: filepath.Join(root, m[1]), listen: freeAddr(t)}
		for _, kv := range strings.Fields(m[2]) {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "GATEHOUSE_INSTANCE":
				in.name = v
			case "GATEHOUSE_HTTP":
				if v == "127.0.0.1:9090" {
					t.Errorf("the README gives the second instance the first's port %s", v)
				}
			default:
				t.Fatalf("the README sets %s, which the test does not know", k)
			}
		}
		instances = append(instances, in)
	}
	if len(instances) != 2 || instances[0].name == instances[1].name || instances[0].dir == instances[1].dir {
		t.Fatalf("want two `cd DIR && GATEHOUSE_INSTANCE=NAME … bot run` lines with their own directory and name:\n%s", shs[1])
	}
	if !strings.Contains(shs[1], "GATEHOUSE_HTTP=") {
		t.Fatalf("the one-machine commands give no instance a port of its own (GATEHOUSE_HTTP):\n%s", shs[1])
	}

	// The configuration: the README's YAML with a Telegram gateway; the
	// workspace is one directory both instances use.
	yamls := fencedBlocks(section, "yaml")
	if len(yamls) != 1 {
		t.Fatalf("want one yaml block in the section, found %d", len(yamls))
	}
	tg := startTelegram(t)
	ws := filepath.Join(root, "workspace")
	config := strings.Replace(yamls[0], "/srv/gatehouse/workspace", ws, 1)
	if config == yamls[0] {
		t.Fatal("the README's yaml sets no tools.workspace /srv/gatehouse/workspace")
	}
	config += `gateways:
  console: {enabled: false}
  telegram: {token: "` + tg.Token() + `", api_url: "` + tg.URL() + `", allow: ["42"]}
hitl: {approvers: ["telegram:42"]}
log: {level: debug, format: json}
`
	for _, in := range instances {
		writeFile(t, in.dir, "config.yaml", config)
		// The test's own free port for each (9090 and 9092 may be taken
		// on the machine running it).
		startBot(t, in.dir, baseEnv(in.dir, "GATEHOUSE_DSN="+dsn.String(), "GATEHOUSE_INSTANCE="+in.name, "GATEHOUSE_HTTP="+in.listen), "run")
	}
	for _, in := range instances {
		testutil.WaitFor(t, in.name+" ready on "+in.listen, func() bool {
			code, _ := get(in.listen, "/readyz")
			return code == http.StatusOK
		})
	}
	askTelegram(t, tg)
	before := len(tg.Sent())
	user := faketg.User{ID: 42, FirstName: "Ada"}
	tg.InjectMessage(faketg.Message{From: &user, Chat: faketg.Chat{ID: 42, Type: "private"}, Text: "/status"})
	testutil.WaitFor(t, "/status naming both instances", func() bool {
		for _, s := range tg.Sent()[before:] {
			for _, line := range strings.Split(s.Plain, "\n") {
				if strings.HasPrefix(line, "Instances: ") && strings.Contains(line, instances[0].name) && strings.Contains(line, instances[1].name) {
					return true
				}
			}
		}
		return false
	})
	// And the store, with the schema this build runs and the server.
	pg, err := storetable.Lookup("postgres")
	if err != nil {
		t.Fatal(err)
	}
	storeLine := fmt.Sprintf("Store: postgres, schema version %d, server PostgreSQL ", pg.SchemaVersion)
	if !slices.ContainsFunc(tg.Sent()[before:], func(s faketg.Sent) bool { return strings.Contains(s.Plain, storeLine) }) {
		t.Errorf("/status does not name the store as %q", storeLine)
	}
	times := 0
	for _, s := range tg.Sent() {
		if strings.Contains(s.Plain, "The time is") {
			times++
		}
	}
	if times != 1 {
		t.Errorf("the question was answered %d times; want once", times)
	}
}
