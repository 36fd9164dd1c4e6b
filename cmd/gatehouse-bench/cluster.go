package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

// dsnEnv is the variable the multi-instance mode takes its server from
// when -dsn is not given: the one the PostgreSQL tests use.
const dsnEnv = "GATEHOUSE_TEST_POSTGRES_DSN"

// maxInstances bounds one -instances entry: the bench starts that many
// bots on one machine.
const maxInstances = 8

// parseInstances reads -instances, a comma-separated list of instance
// counts ("1,2,3"); "" is none.
func parseInstances(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxInstances {
			return nil, fmt.Errorf("-instances: want a comma-separated list of counts from 1 to %d, got %q", maxInstances, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// idleWindow is how long the instances' background writes (heartbeats,
// lease renewals, each every few seconds) are measured, before the burst,
// to be subtracted from it: the default lease_ttl, so that a window holds
// several of each.
const idleWindow = 15 * time.Second

// statsSettle is how long the bench waits, after the burst's history
// rows have been counted (or statsWait has passed), before it reads the
// counters: a PostgreSQL backend reports its counts about once a second
// (when it goes idle), each backend on its own.
const statsSettle = 1500 * time.Millisecond

// statsWait bounds the wait for the burst's history rows to be counted;
// past it the counters are read as they are (a lost reply leaves a row
// missing, which the tally reports).
const statsWait = 15 * time.Second

// clusterRun is what one multi-instance run measured: n instances of the
// bot on one fresh database, one Telegram token.
type clusterRun struct {
	instances int
	burst     time.Duration // from the first message injected to the last reply sent
	cpu       time.Duration // all instances' CPU time over the burst
	// Over the burst, with the idle rate subtracted: transactions
	// committed (pg_stat_database.xact_commit: reads included) and rows
	// written to the bot's tables (pg_stat_user_tables: n_tup_ins +
	// n_tup_upd + n_tup_del; the server's own catalog writes, such as
	// autovacuum's statistics, are left out).
	xacts, rows float64
	// The idle rates per second, all instances together.
	idleXacts, idleRows float64
	// byTable and idleByTable are the rows written to each table over
	// the burst (idle writes not subtracted) and the idle window, from
	// pg_stat_user_tables.
	byTable, idleByTable map[string]int64
	tally                tally
}

// measureCluster runs the burst against 1, 2, … instances (o.instances)
// of bin on one PostgreSQL database each, fresh, created on the server
// dsn names and dropped afterwards.
func measureCluster(ctx context.Context, o options, bin, dsn, dir string, progress io.Writer) ([]clusterRun, error) {
	var out []clusterRun
	for i, n := range o.instances {
		fmt.Fprintf(progress, "%d instance(s) on one PostgreSQL database: burst of %d messages over %d chats …\n", n, o.messages, o.chats)
		sub := filepath.Join(dir, fmt.Sprintf("cluster-%d", i))
		if err := os.Mkdir(sub, 0o700); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		r, err := clusterOnce(ctx, o, bin, dsn, sub, n)
		if err != nil {
			return nil, fmt.Errorf("%d instance(s): %w", n, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// clusterOnce measures n instances on a database of their own, created
// on the server for the run and dropped after it.
func clusterOnce(ctx context.Context, o options, bin, server, dir string, n int) (run clusterRun, err error) {
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		return clusterRun{instances: n}, fmt.Errorf("connect to the server: %w", err) // pgx names the host and user, not the password
	}
	defer admin.Close(context.WithoutCancel(ctx))
	db, dsn, err := createDatabase(ctx, admin, server)
	if err != nil {
		return clusterRun{instances: n}, err
	}
	defer func() {
		if _, derr := admin.Exec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)"); derr != nil && err == nil {
			err = fmt.Errorf("drop database %s: %w", db, derr)
		}
	}()
	return clusterOn(ctx, o, bin, dir, n, admin, db, dsn)
}

// clusterBench is one multi-instance run in progress: its bots, the
// fake Telegram they share, and the two connections its counters are
// read through.
type clusterBench struct {
	o     options
	n     int
	db    string    // the bench database's name
	admin *pgx.Conn // to another database of the server: reads pg_stat_database
	watch *pgx.Conn // to the bench's database: reads pg_stat_user_tables
	tg    *faketg.Server
	bots  []*botProcess
}

// clusterOn starts the fakes and n instances of bin on the database db
// (dsn names it; admin is connected to another database of its server),
// measures the idle window and the burst, and stops the instances.
func clusterOn(ctx context.Context, o options, bin, dir string, n int, admin *pgx.Conn, db, dsn string) (run clusterRun, err error) {
	run.instances = n
	tg := faketg.New(faketg.Options{})
	defer tg.Close()
	ai := fakeopenai.New()
	defer ai.Close()
	ai.Respond(func(r fakeopenai.Request) fakeopenai.Step { return fakeopenai.Text("echo: " + r.LastUser()) })
	cfg, err := writeClusterConfig(dir, tg, ai)
	if err != nil {
		return run, err
	}
	var bots []*botProcess
	defer func() {
		for _, p := range bots {
			p.kill()
		}
	}()
	for i := range n {
		p, err := startBot(bin, cfg, dir, i, "GATEHOUSE_DSN="+dsn)
		if err != nil {
			return run, err
		}
		bots = append(bots, p)
	}
	watch, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return run, fmt.Errorf("connect to the bench database: %w", err)
	}
	defer watch.Close(context.WithoutCancel(ctx))
	c := &clusterBench{o: o, n: n, db: db, admin: admin, watch: watch, tg: tg, bots: bots}
	if err := c.waitReady(ctx); err != nil {
		return run, err
	}
	if err := c.measureIdle(ctx, &run); err != nil {
		return run, err
	}
	if err := c.measureBurst(ctx, &run); err != nil {
		return run, err
	}
	for _, p := range bots {
		if err := p.stop(); err != nil {
			return run, err
		}
	}
	bots = nil
	run.tally = tallyReplies(tg.Sent(), o.messages, o.chats)
	return run, nil
}

// waitReady waits until every instance is alive and polling, the
// migration's writes are in the counters, and one turn ("hi") has been
// answered and its writes counted, so that all of it falls before the
// windows.
func (c *clusterBench) waitReady(ctx context.Context) error {
	err := c.bots[0].waitFor(ctx, "every instance's heartbeat and the first getUpdates", 50*time.Millisecond, func() bool {
		var alive int
		err := c.watch.QueryRow(ctx, `SELECT count(*) FROM instances`).Scan(&alive) // fails until migrated
		return err == nil && alive == c.n && len(c.tg.Polls()) > 0
	})
	if err != nil {
		return err
	}
	// The migration's writes (hundreds of catalog rows) reach the
	// counters when its connection reports them, which may be seconds
	// later: wait for them, so that they fall before the windows.
	err = c.bots[0].waitFor(ctx, "the migration's writes in pg_stat_user_tables", 100*time.Millisecond, func() bool {
		var n int64
		err := c.watch.QueryRow(ctx, `SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables WHERE relname = 'goose_db_version'`).Scan(&n)
		return err == nil && n > 0
	})
	if err != nil {
		return err
	}
	// One turn first, so that every statement is prepared and the
	// history tables exist.
	chat := int64(firstChat - 1)
	c.tg.InjectMessage(faketg.Message{From: &faketg.User{ID: chat, FirstName: "bench"}, Chat: faketg.Chat{ID: chat, Type: "private"}, Text: "hi"})
	if err := c.bots[0].waitFor(ctx, `the reply to "hi"`, time.Millisecond, func() bool { return c.tg.Calls("sendMessage") > 0 }); err != nil {
		return err
	}

	// Its writes reach the counters about a second later: wait for
	// them (the question and the answer), so that they fall before the
	// idle window.
	return c.bots[0].waitFor(ctx, `the "hi" turn's writes in pg_stat_user_tables`, 100*time.Millisecond, func() bool {
		var n int64
		err := c.watch.QueryRow(ctx, `SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables WHERE relname = 'messages'`).Scan(&n)
		return err == nil && n >= 2
	})
}

// measureIdle measures the instances' background writes over
// idleWindow into run's idle rates and idleByTable.
func (c *clusterBench) measureIdle(ctx context.Context, run *clusterRun) error {
	ti0, err := readTableStats(ctx, c.watch)
	if err != nil {
		return err
	}
	idle0, err := readDBStats(ctx, c.admin, c.db)
	if err != nil {
		return err
	}
	if err := pause(ctx, idleWindow); err != nil {
		return err
	}
	idle1, err := readDBStats(ctx, c.admin, c.db)
	if err != nil {
		return err
	}
	ti1, err := readTableStats(ctx, c.watch)
	if err != nil {
		return err
	}
	run.idleByTable = tableDelta(ti0, ti1)
	idleSecs := idle1.at.Sub(idle0.at).Seconds()
	run.idleXacts = float64(idle1.xacts-idle0.xacts) / idleSecs
	run.idleRows = float64(sum(run.idleByTable)) / idleSecs
	return nil
}

// measureBurst runs the burst and measures it into run: its duration,
// the instances' CPU time, and the transactions and rows written over
// it, the idle rates (measureIdle's) subtracted.
func (c *clusterBench) measureBurst(ctx context.Context, run *clusterRun) error {
	// The tables' counters are read through watch, on the bench's
	// database, outside the window of its own counters.
	t0, err := readTableStats(ctx, c.watch)
	if err != nil {
		return err
	}
	s0, err := readDBStats(ctx, c.admin, c.db)
	if err != nil {
		return err
	}
	cpu0, err := sumCPU(c.bots)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := burst(ctx, c.o, c.bots, c.tg); err != nil {
		return err
	}
	cpu1, err := sumCPU(c.bots)
	if err != nil {
		return err
	}
	run.cpu = cpu1 - cpu0
	run.burst = lastReplyAt(c.tg.Sent(), start).Sub(start)
	looks, err := c.waitHistoryCounted(ctx, t0)
	if err != nil {
		return err
	}
	if err := pause(ctx, statsSettle); err != nil {
		return err
	}
	s1, err := readDBStats(ctx, c.admin, c.db)
	if err != nil {
		return err
	}
	t1, err := readTableStats(ctx, c.watch)
	if err != nil {
		return err
	}
	run.byTable = tableDelta(t0, t1)
	secs := s1.at.Sub(s0.at).Seconds()
	run.xacts = float64(s1.xacts-s0.xacts-int64(looks)) - run.idleXacts*secs
	run.rows = float64(sum(run.byTable)) - run.idleRows*secs
	return nil
}

// waitHistoryCounted waits, at most statsWait, until the burst's rows of
// messages (t0 the counters before it) are in the counters: every
// message and its reply are a row each. It returns how many times it
// looked: each look is a transaction on the bench's database, to be
// taken off its count.
func (c *clusterBench) waitHistoryCounted(ctx context.Context, t0 map[string]int64) (looks int, err error) {
	for deadline := time.Now().Add(statsWait); time.Now().Before(deadline); {
		looks++
		t, err := readTableStats(ctx, c.watch)
		if err != nil {
			return looks, err
		}
		if t["messages"]-t0["messages"] >= int64(2*c.o.messages) {
			break
		}
		if err := pause(ctx, 100*time.Millisecond); err != nil {
			return looks, err
		}
	}
	return looks, nil
}

// writeClusterConfig writes the bench's configuration (writeConfig's)
// with the PostgreSQL store, its DSN from ${GATEHOUSE_DSN}, and a
// workspace all instances share, as a deployment would mount one.
func writeClusterConfig(dir string, tg *faketg.Server, ai *fakeopenai.Server) (string, error) {
	path, err := writeConfig(dir, tg, ai)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	sqlite := fmt.Sprintf("store: {dsn: %q}\n", filepath.Join(dir, "gatehouse.db"))
	if !strings.Contains(string(b), sqlite) {
		return "", errors.New("config: writeConfig no longer writes the store line the cluster mode replaces")
	}
	yaml := strings.Replace(string(b), sqlite, "store: {driver: postgres, dsn: \"${GATEHOUSE_DSN}\"}\n", 1)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	return path, nil
}

// burst injects the burst's messages and waits until as many replies as
// messages were sent, or no new reply came for the hang guard (the tally
// then counts what is missing).
func burst(ctx context.Context, o options, bots []*botProcess, tg *faketg.Server) error {
	base := tg.Calls("sendMessage")
	for i := range o.messages {
		chat := int64(firstChat + i%o.chats)
		tg.InjectMessage(faketg.Message{From: &faketg.User{ID: chat, FirstName: "bench"}, Chat: faketg.Chat{ID: chat, Type: "private"}, Text: messageText(i)})
	}
	want := base + o.messages
	last, lastAt := base, time.Now()
	for {
		n := tg.Calls("sendMessage")
		if n >= want {
			return nil
		}
		if n != last {
			last, lastAt = n, time.Now()
		}
		if time.Since(lastAt) > hangGuard {
			return nil
		}
		for _, p := range bots {
			if done, err := p.exited(); done {
				return fmt.Errorf("an instance exited during the burst (%v)\n%s", err, p.logTail())
			}
		}
		if err := pause(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
}

// sumCPU is the CPU time the bots have used so far, together.
func sumCPU(bots []*botProcess) (time.Duration, error) {
	var sum time.Duration
	for _, p := range bots {
		d, err := readCPU(p.pid())
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// createDatabase creates a fresh database on the server admin is
// connected to and returns its name and the server DSN naming it.
func createDatabase(ctx context.Context, admin *pgx.Conn, server string) (string, string, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "gatehouse_bench_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", "", fmt.Errorf("create database %s (the role needs CREATEDB): %w", name, err)
	}
	dsn, err := withDatabase(server, name)
	if err != nil {
		return "", "", err
	}
	return name, dsn, nil
}

// withDatabase returns dsn (a URL or key=value DSN) with its database
// replaced by name.
func withDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", errors.New("the PostgreSQL DSN is not a valid URL") // the error would show the password
		}
		u.Path = "/" + name
		return u.String(), nil
	}
	return dsn + " dbname=" + name, nil // the last of a repeated key wins
}

// printCluster writes the multi-instance runs as a Markdown table.
func printCluster(w io.Writer, runs []clusterRun, o options) {
	fmt.Fprintf(w, "\nSeveral instances on one PostgreSQL database, one Telegram token, %d messages over %d chats\n"+
		"(transactions: pg_stat_database.xact_commit of the bench's database, read-only ones included; rows written:\n"+
		"pg_stat_user_tables, inserted + updated + deleted; both with the idle rate of heartbeats and leases subtracted):\n\n", o.messages, o.chats)
	fmt.Fprintln(w, "| instances | replies/s | CPU per message (all instances) | transactions per message | rows written per message | idle: transactions/s, rows written/s | lost / merged / duplicated |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range runs {
		t := r.tally
		m := float64(t.messages)
		fmt.Fprintf(w, "| %d | %.1f | %s | %.1f | %.1f | %.1f, %.1f | %d / %d / %d |\n",
			r.instances, float64(t.replies)/r.burst.Seconds(), ms(r.cpu/time.Duration(t.messages)),
			r.xacts/m, r.rows/m, r.idleXacts, r.idleRows, t.lost, t.merged, t.duplicated)
	}
	fmt.Fprintln(w, "\nRows written by table, per message over the burst (idle writes included) and per second idle:")
	for _, r := range runs {
		fmt.Fprintf(w, "- %d instance(s): %s; idle: %s\n", r.instances,
			byTableLine(r.byTable, float64(r.tally.messages)), byTableLine(r.idleByTable, idleWindow.Seconds()))
	}
}
