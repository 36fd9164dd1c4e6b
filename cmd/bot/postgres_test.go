package main

import (
	"net"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
)

// postgresConfig is the offline configuration on the PostgreSQL store dsn
// names (through ${GATEHOUSE_DSN}, as a deployment would set it).
func postgresConfig(t *testing.T) string {
	t.Helper()
	cfg := offlineConfig(t)
	const sqliteStore = "  driver: sqlite                # sqlite | postgres\n"
	if !strings.Contains(cfg, sqliteStore) {
		t.Fatalf("the shipped config.yaml no longer has %q; update this test", sqliteStore)
	}
	return strings.Replace(strings.Replace(cfg, sqliteStore, "  driver: postgres\n", 1),
		"  dsn: gatehouse.db", "  dsn: ${GATEHOUSE_DSN}", 1)
}

// TestPostgresFaults: a database nobody listens for and a wrong password
// stop the bot at start with exit 1 and one line naming the host and port
// and the reason; a DSN that does not parse exits 2 naming store.dsn. The
// password shows in none of them.
func TestPostgresFaults(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-Pa55word"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, dsn string
		code      int
		want      []string
	}{
		{"unreachable", "postgres://bot:" + secret + "@" + closed + "/gatehouse?sslmode=disable", exitFail,
			[]string{"cannot connect to " + closed + "/gatehouse", "connection refused"}},
		{"port not a number", "postgres://bot:" + secret + "@127.0.0.1:notaport/gatehouse", exitConfig,
			[]string{"store.dsn: not a PostgreSQL connection string: invalid port"}},
	}
	if server := pgtestServer(); server != "" {
		u, err := url.Parse(server)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(u.User.Username(), secret)
		cases = append(cases, struct {
			name, dsn string
			code      int
			want      []string
		}{"wrong password", u.String(), exitFail,
			[]string{"cannot connect to " + u.Host, "password authentication failed"}})
	} else {
		t.Log("wrong password: skipped; set " + pgtest.Env + " to run it (bash .ci/postgres.sh does)")
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, dir, "config.yaml", postgresConfig(t))
			r := runOnce(t, dir, baseEnv(dir, "GATEHOUSE_DSN="+tc.dsn), "hello\n")
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != tc.code || len(lines) != 1 {
				t.Fatalf("exit %d with %d lines; want %d and one line\nstderr:\n%s", r.code, len(lines), tc.code, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q does not say %q", r.stderr, w)
				}
			}
			if strings.Contains(r.stdout+r.stderr, secret) {
				t.Errorf("the password shows:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
		})
	}
}

// pgtestServer is the test server's DSN, "" when none is set.
func pgtestServer() string { return os.Getenv(pgtest.Env) }

// TestPostgresStore: the bot runs on PostgreSQL: a piped question is
// answered and its tool call audited; `bot audit` and `bot doctor` (which
// names the database and the server's version) then read the same
// database, read-only.
func TestPostgresStore(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", postgresConfig(t))
	env := baseEnv(dir, "GATEHOUSE_DSN="+dsn)
	r := runOnce(t, dir, env, "what time is it\n")
	if r.code != exitOK || !strings.Contains(r.stdout, "The time is") {
		t.Fatalf("bot on postgres: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r := runOnce(t, dir, env, "", "audit"); r.code != exitOK || !strings.Contains(r.stdout, "current_time") {
		t.Errorf("bot audit: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	want := "postgres " + u.Host + u.Path + " (schema version"
	r = runOnce(t, dir, env, "", "doctor")
	if !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "server: PostgreSQL ") ||
		strings.Contains(r.stdout+r.stderr, passwordOf(u)) {
		t.Errorf("bot doctor: exit %d; want %q, the server's version and no password\nstdout:\n%s\nstderr:\n%s",
			r.code, want, r.stdout, r.stderr)
	}
}

func passwordOf(u *url.URL) string {
	if pw, ok := u.User.Password(); ok && pw != "" {
		return pw
	}
	return "\x00no password\x00"
}

// TestPostgresSecondInstanceRuns: a second `bot run` on the PostgreSQL
// database of a running bot starts and answers (several instances share
// one database), and the first bot goes on answering.
func TestPostgresSecondInstanceRuns(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", postgresConfig(t))
	env := baseEnv(dir, "GATEHOUSE_DSN="+dsn)
	p := startBot(t, dir, env)
	p.send("what time is it")
	expectLine(t, p, "The time is")

	r := runOnce(t, dir, env, "what time is it\n", "run")
	if r.code != 0 || !strings.Contains(r.stdout, "The time is") {
		t.Fatalf("second instance: exit %d; want 0 and an answer\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	p.send("what time is it")
	expectLine(t, p, "The time is")
}
