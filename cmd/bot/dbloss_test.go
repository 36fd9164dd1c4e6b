package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// ownPostgres is a PostgreSQL server of a test's own, started as
// .ci/postgres.sh starts one (initdb in a temporary directory, as nobody
// when the test runs as root, trust authentication on 127.0.0.1 at a
// fixed port), so that the test may stop and start it again: the shared
// test server is never touched.
type ownPostgres struct {
	bin  string   // the directory of initdb, pg_ctl and postgres
	dir  string   // the cluster's directory (data/, the log, the socket)
	port int      // kept across restarts: the bot's DSN names it
	as   []string // the command prefix that runs as the server's user
}

// startOwnPostgres creates and starts a server of the test's own; it is
// stopped and removed when the test ends. The test is skipped, with one
// line, when PostgreSQL tests are off (GATEHOUSE_TEST_POSTGRES_DSN unset)
// or the server's programs are missing.
func startOwnPostgres(t *testing.T) *ownPostgres {
	t.Helper()
	if os.Getenv(pgtest.Env) == "" {
		t.Skip("PostgreSQL tests are off: set " + pgtest.Env + " (bash .ci/postgres.sh does); this test starts a server of its own")
	}
	bin := pgBinDir()
	if bin == "" {
		t.Skip("no PostgreSQL server programs (initdb, pg_ctl): install Debian's postgresql")
	}
	dir, err := os.MkdirTemp("", "gatehouse-dbloss-")
	if err != nil {
		t.Fatal(err)
	}
	p := &ownPostgres{bin: bin, dir: dir}
	t.Cleanup(func() {
		p.ctl("-m", "immediate", "stop").Run() //nolint:errcheck // may be stopped already
		os.RemoveAll(dir)
	})
	if os.Getuid() == 0 {
		// PostgreSQL refuses to run as root.
		nobody, err := user.Lookup("nobody")
		if err != nil {
			t.Skipf("running as root and no user nobody to run PostgreSQL as: %v", err)
		}
		uid, _ := strconv.Atoi(nobody.Uid)
		gid, _ := strconv.Atoi(nobody.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		p.as = []string{"runuser", "-u", "nobody", "--"}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	initdb := p.cmd(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "gatehouse",
		"--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	p.start(t)
	return p
}

// pgBinDir finds the directory of initdb and pg_ctl, "" when there is none.
func pgBinDir() string {
	if path, err := exec.LookPath("initdb"); err == nil {
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), "pg_ctl")); err == nil {
			return filepath.Dir(path)
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.Reverse(dirs)
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d
		}
	}
	return ""
}

func (p *ownPostgres) cmd(name string, args ...string) *exec.Cmd {
	argv := append(append(slices.Clone(p.as), name), args...)
	return exec.Command(argv[0], argv[1:]...)
}

func (p *ownPostgres) ctl(args ...string) *exec.Cmd {
	return p.cmd(filepath.Join(p.bin, "pg_ctl"), append([]string{"-D", filepath.Join(p.dir, "data")}, args...)...)
}

// start starts the server and waits until it accepts connections.
func (p *ownPostgres) start(t *testing.T) {
	t.Helper()
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c max_connections=50", p.port, p.dir)
	if out, err := p.ctl("-w", "-t", "60", "-l", filepath.Join(p.dir, "server.log"), "-o", opts, "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(p.dir, "server.log"))
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

// crash stops the server at once, as a crash or a failover would: every
// connection is cut.
func (p *ownPostgres) crash(t *testing.T) {
	t.Helper()
	if out, err := p.ctl("-m", "immediate", "-w", "stop").CombinedOutput(); err != nil {
		t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

func (p *ownPostgres) dsn() string {
	return fmt.Sprintf("postgres://gatehouse@127.0.0.1:%d/postgres?sslmode=disable", p.port)
}

// dblossConfig runs Telegram alone against the fake, on PostgreSQL, with
// /readyz on listen and store.lease_ttl leaseTTL; users 41 to 44 may talk
// to the bot.
func dblossConfig(dir, listen string, tg *faketg.Server, leaseTTL string) string {
	return fmt.Sprintf(`
gateways:
  console: {enabled: false}
  telegram: {token: %q, api_url: %q, allow: ["41", "42", "43", "44"]}
hitl: {approvers: ["telegram:41"]}
tools: {workspace: %q}
store:
  driver: postgres
  dsn: ${GATEHOUSE_DSN}
  lease_ttl: %s
  instance: dbloss-a
http: {listen: %q}
log: {level: debug, format: json}
`, tg.Token(), tg.URL(), filepath.Join(dir, "ws"), leaseTTL, listen)
}

// answers counts the bot's "The time is" answers in each chat.
func answers(tg *faketg.Server) map[int64]int {
	n := map[int64]int{}
	for _, s := range tg.Sent() {
		if strings.Contains(s.Plain, "The time is") {
			n[s.ChatID]++
		}
	}
	return n
}

// TestDatabaseLostWhileRunning: the bot's PostgreSQL server crashes
// mid-run. The bot stays up, /readyz says the store is not answering,
// and the Telegram messages sent meanwhile are handed to the bot and
// refused (the store is unreachable) without being confirmed to Telegram,
// nor answered. Once the server is back, /readyz is ready again and every
// message is answered exactly once, without a restart. The log says once
// that the store is lost and once that it is back.
func TestDatabaseLostWhileRunning(t *testing.T) {
	t.Parallel()
	pg := startOwnPostgres(t)
	tg := startTelegram(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	writeFile(t, dir, "config.yaml", dblossConfig(dir, addr, tg, "2m"))
	p := startBot(t, dir, baseEnv(dir, "GATEHOUSE_DSN="+pg.dsn()))
	testutil.WaitFor(t, "/readyz ready", func() bool { code, _ := get(addr, "/readyz"); return code == http.StatusOK })
	ask := func(id int64) int {
		u := faketg.User{ID: id, FirstName: "U" + strconv.FormatInt(id, 10)}
		return tg.InjectMessage(faketg.Message{From: &u, Chat: faketg.Chat{ID: id, Type: "private"}, Text: "what time is it"})
	}
	ask(41)
	testutil.WaitFor(t, "the answer before the outage", func() bool { return answers(tg)[41] == 1 })

	pg.crash(t)
	testutil.WaitFor(t, "/readyz not ready", func() bool {
		code, body := get(addr, "/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "store: not answering")
	})
	first := 0
	for _, id := range []int64{42, 43, 44} {
		if u := ask(id); first == 0 {
			first = u
		}
	}
	// The bot polls again and again, and is handed the updates each time;
	// none is confirmed (the offset stays at the first of them).
	polls := len(tg.Polls())
	testutil.WaitFor(t, "three polls during the outage", func() bool { return len(tg.Polls()) >= polls+3 })
	for _, poll := range tg.Polls()[polls:] {
		if poll.Offset > first {
			t.Errorf("a poll during the outage confirmed update %d (offset %d): a message refused is lost", first, poll.Offset)
		}
	}
	if n := answers(tg); n[42]+n[43]+n[44] != 0 {
		t.Errorf("answers during the outage: %v; want none", n)
	}
	for _, s := range tg.Sent() {
		if s.ChatID != 41 {
			t.Errorf("sent to chat %d during the outage: %q", s.ChatID, s.Plain)
		}
	}
	select {
	case <-p.done:
		t.Fatalf("the bot stopped when the database was lost: %v\n%s", p.state, tail(p.stderr.String(), 20))
	default:
	}
	env := baseEnv(dir, "GATEHOUSE_DSN="+pg.dsn())
	if r := runOnce(t, dir, env, "", "healthcheck", "-ready"); r.code != exitFail || !strings.Contains(r.stderr, "/readyz: status 503") {
		t.Errorf("bot healthcheck -ready during the outage: exit %d; want %d naming /readyz 503\n%s%s", r.code, exitFail, r.stdout, r.stderr)
	}
	if r := runOnce(t, dir, env, "", "healthcheck"); r.code != exitOK {
		t.Errorf("bot healthcheck (liveness) during the outage: exit %d; want 0: the bot is alive\n%s%s", r.code, r.stdout, r.stderr)
	}

	pg.start(t)
	testutil.WaitFor(t, "/readyz ready again", func() bool { code, _ := get(addr, "/readyz"); return code == http.StatusOK })
	if r := runOnce(t, dir, env, "", "healthcheck", "-ready"); r.code != exitOK {
		t.Errorf("bot healthcheck -ready once the store is back: exit %d; want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	testutil.WaitFor(t, "the three answers after the outage", func() bool {
		n := answers(tg)
		return n[42] >= 1 && n[43] >= 1 && n[44] >= 1
	})
	// A last question, answered after anything still in flight.
	ask(41)
	testutil.WaitFor(t, "the answer after the outage", func() bool { return answers(tg)[41] == 2 })
	if n := answers(tg); n[42] != 1 || n[43] != 1 || n[44] != 1 {
		t.Errorf("answers per chat: %v; want exactly one each for 42, 43, 44", n)
	}
	for _, s := range tg.Sent() {
		if strings.Contains(s.Plain, "Sorry") {
			t.Errorf("chat %d was told %q", s.ChatID, s.Plain)
		}
	}
	logs := p.stderr.String()
	for _, line := range []string{"store: not answering", "store: answering again"} {
		if n := strings.Count(logs, line); n != 1 {
			t.Errorf("the log says %q %d times; want once", line, n)
		}
	}
}

// TestDatabaseLostLongerThanTheLease: an outage longer than half of
// store.lease_ttl stops Telegram polling (its lease cannot be renewed, so
// another instance could take it); once the server is back the lease is
// taken again and polling resumes from the stored offset, without a
// restart: the messages sent during the outage are answered once each.
// The lease loop says once that it cannot take the lease and once that
// the store answers again.
func TestDatabaseLostLongerThanTheLease(t *testing.T) {
	t.Parallel()
	pg := startOwnPostgres(t)
	tg := startTelegram(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	writeFile(t, dir, "config.yaml", dblossConfig(dir, addr, tg, "3s"))
	p := startBot(t, dir, baseEnv(dir, "GATEHOUSE_DSN="+pg.dsn()))
	testutil.WaitFor(t, "/readyz ready", func() bool { code, _ := get(addr, "/readyz"); return code == http.StatusOK })
	ask := func(id int64) {
		u := faketg.User{ID: id, FirstName: "U" + strconv.FormatInt(id, 10)}
		tg.InjectMessage(faketg.Message{From: &u, Chat: faketg.Chat{ID: id, Type: "private"}, Text: "what time is it"})
	}
	ask(41)
	testutil.WaitFor(t, "the answer before the outage", func() bool { return answers(tg)[41] == 1 })

	pg.crash(t)
	testutil.WaitFor(t, "polling stopped: the lease lost", func() bool {
		return strings.Contains(p.stderr.String(), "lease: lost; run stopped")
	})
	for _, id := range []int64{42, 43} {
		ask(id)
	}
	testutil.WaitFor(t, "a failed try to take the lease again", func() bool {
		return strings.Contains(p.stderr.String(), "lease: could not be taken")
	})
	pg.start(t)
	testutil.WaitFor(t, "the answers after the outage", func() bool {
		n := answers(tg)
		return n[42] >= 1 && n[43] >= 1
	})
	ask(41)
	testutil.WaitFor(t, "the answer after the outage", func() bool { return answers(tg)[41] == 2 })
	if n := answers(tg); n[42] != 1 || n[43] != 1 {
		t.Errorf("answers per chat: %v; want exactly one each for 42 and 43", n)
	}
	logs := p.stderr.String()
	for _, line := range []string{"lease: could not be taken", "lease: the store answers again"} {
		if n := strings.Count(logs, line); n != 1 {
			t.Errorf("the log says %q %d times; want once", line, n)
		}
	}
}
