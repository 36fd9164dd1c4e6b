package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// clusterEvery is the interval of the cluster test's schedule.
const clusterEvery = 2 * time.Second

// clusterScheduleBlock is an "@every 2s" schedule whose prompt the demo
// model answers with the time: one "The time is" line on the console of
// the instance that ran the slot.
const clusterScheduleBlock = `
schedules:
  - name: tick
    cron: "@every 2s"
    conversation: "console:local"
    prompt: "what time is it"
`

// clusterNode is one instance of the cluster test: its process and the
// name it claims slots under (store.instance).
type clusterNode struct {
	name string
	p    *botProc
}

// startClusterNode starts one bot named name on the database dsn, in a
// directory (and workspace) of its own.
func startClusterNode(t *testing.T, dsn, name string) *clusterNode {
	t.Helper()
	dir := t.TempDir()
	cfg := postgresConfig(t)
	const unnamed = `  instance: ""`
	if !strings.Contains(cfg, unnamed) {
		t.Fatalf("the shipped config.yaml no longer has %q; update this test", unnamed)
	}
	cfg = strings.Replace(cfg, unnamed, "  instance: "+name, 1)
	writeFile(t, dir, "config.yaml", cfg+clusterScheduleBlock)
	return &clusterNode{name: name, p: startBot(t, dir, baseEnv(dir, "GATEHOUSE_DSN="+dsn))}
}

// runs counts the runs the node's console has shown so far (the demo
// model's answer to the schedule's prompt), reading what stdout has
// without waiting.
func (n *clusterNode) runs() int {
	for {
		select {
		case line, ok := <-n.p.lines:
			if !ok {
				return strings.Count(n.p.stdout(), "The time is")
			}
			n.p.seen = append(n.p.seen, line)
		default:
			return strings.Count(n.p.stdout(), "The time is")
		}
	}
}

// skipped counts the slots the node claimed and skipped because the
// schedule's previous run was still going (here or on another instance).
func (n *clusterNode) skipped() int {
	return strings.Count(n.p.stderr.String(), "schedule: run skipped: the previous run is still going")
}

// slotClaim is one row of schedule_runs: a slot and who claimed it.
type slotClaim struct {
	slot     time.Time
	instance string
}

func (c slotClaim) String() string { return c.slot.Format("15:04:05") + " " + c.instance }

// claimedSlots reads the tick schedule's claimed slots, oldest first.
func claimedSlots(t *testing.T, conn *pgx.Conn) []slotClaim {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	rows, err := conn.Query(ctx, `SELECT slot, instance FROM schedule_runs WHERE name = 'tick' ORDER BY slot`)
	if err != nil {
		t.Fatalf("read schedule_runs: %v", err)
	}
	claims, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (slotClaim, error) {
		var c slotClaim
		var ns int64
		err := r.Scan(&ns, &c.instance)
		c.slot = time.Unix(0, ns)
		return c, err
	})
	if err != nil {
		t.Fatalf("read schedule_runs: %v", err)
	}
	return claims
}

// checkSlots checks what the nodes ran against the slots they claimed:
// every slot is a multiple of the interval since the epoch (all instances
// agree on the slots), no node has run more slots than it claimed (none
// ran a slot twice or one another claimed), and, when settled, each has
// run or skipped (its previous run still going: a loaded machine) every
// slot it claimed. The runs are read before the claims, so a claim made
// in between can only make the runs look fewer. It returns the claims and
// whether the runs matched them.
func checkSlots(t *testing.T, conn *pgx.Conn, nodes []*clusterNode) ([]slotClaim, bool) {
	t.Helper()
	runs, skips := map[string]int{}, map[string]int{}
	for _, n := range nodes {
		runs[n.name] = n.runs()
		skips[n.name] = n.skipped()
	}
	claims := claimedSlots(t, conn)
	claimed := map[string]int{}
	for _, c := range claims {
		if c.slot.UnixNano()%clusterEvery.Nanoseconds() != 0 {
			t.Fatalf("slot %s claimed by %s is not a multiple of %s since the epoch: the instances disagree on the slots",
				c.slot.UTC().Format(time.RFC3339Nano), c.instance, clusterEvery)
		}
		claimed[c.instance]++
	}
	settled := true
	for _, n := range nodes {
		if runs[n.name]+skips[n.name] > claimed[n.name] {
			t.Fatalf("%s ran %d slots (and skipped %d) but claimed %d: a slot ran twice or without its claim\nclaims: %v",
				n.name, runs[n.name], skips[n.name], claimed[n.name], claims)
		}
		settled = settled && runs[n.name]+skips[n.name] == claimed[n.name]
	}
	for c := range claimed {
		if _, ours := runs[c]; !ours {
			t.Fatalf("a slot was claimed by %q, which is none of the instances", c)
		}
	}
	return claims, settled
}

// waitSlots waits until more than want slots are claimed after from and
// every node's runs match its claims, checking at each look; it returns
// the claims.
func waitSlots(t *testing.T, conn *pgx.Conn, nodes []*clusterNode, from time.Time, want int) []slotClaim {
	t.Helper()
	var claims []slotClaim
	testutil.WaitFor(t, fmt.Sprintf("%d slots claimed after %s, each run once", want, from.Format(time.TimeOnly)), func() bool {
		var settled bool
		claims, settled = checkSlots(t, conn, nodes)
		after := 0
		for _, c := range claims {
			if c.slot.After(from) {
				after++
			}
		}
		if !settled || after < want {
			time.Sleep(50 * time.Millisecond) // a look costs a query; a slot is 2 s
			return false
		}
		return true
	})
	return claims
}

// logGaps logs the slots no instance claimed between the first and the
// last claim: a slot is skipped, not replayed, when every instance was
// held up past it (a loaded machine), so a gap is reported, not failed.
func logGaps(t *testing.T, claims []slotClaim) {
	t.Helper()
	for i := 1; i < len(claims); i++ {
		if d := claims[i].slot.Sub(claims[i-1].slot); d != clusterEvery {
			t.Logf("no instance claimed the %d slot(s) between %s and %s", d/clusterEvery-1,
				claims[i-1].slot.Format(time.TimeOnly), claims[i].slot.Format(time.TimeOnly))
		}
	}
}

// TestScheduleClusterRunsEachSlotOnce: three real bots on one PostgreSQL
// database with an "@every 2s" schedule: every slot claimed is aligned to
// the epoch, each is run by the one instance that claimed it, once (its
// console shows the answer), and runs keep happening. Then one instance is
// SIGKILLed: the other two go on running each slot once, and the dead one
// claims nothing more.
func TestScheduleClusterRunsEachSlotOnce(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	var nodes []*clusterNode
	for _, name := range []string{"node-a", "node-b", "node-c"} {
		nodes = append(nodes, startClusterNode(t, dsn, name))
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	conn, err := pgx.Connect(ctx, dsn)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })

	// Every instance is up (its heartbeat is in the store) before the
	// slots count.
	testutil.WaitFor(t, "the three instances to start", func() bool {
		var alive int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM instances`).Scan(&alive); err != nil {
			time.Sleep(50 * time.Millisecond) // the first instance may not have migrated yet
			return false
		}
		return alive == len(nodes)
	})
	start := time.Now()
	claims := waitSlots(t, conn, nodes, start, 5)
	logGaps(t, claims)
	t.Logf("three instances: %d slots claimed: %v", len(claims), claims)

	dead := nodes[0]
	dead.p.kill9()
	killed := time.Now()
	claims = waitSlots(t, conn, nodes, killed.Add(clusterEvery), 4)
	logGaps(t, claims)
	for _, c := range claims {
		if c.instance == dead.name && c.slot.After(killed.Add(clusterEvery)) {
			t.Errorf("%s claimed slot %s after it was killed", dead.name, c.slot.Format(time.TimeOnly))
		}
	}
	t.Logf("after the kill: %d slots claimed in all: %v", len(claims), claims)
}

// TestScheduleClusterSkipsWhileARunWaits: with three real bots on one
// database, an "@every 2s" schedule whose run waits for an approval holds
// the next slots on every instance, not only on the one where it waits:
// one approval request in all while the first run waits, as with one bot.
func TestScheduleClusterSkipsWhileARunWaits(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	var nodes []*clusterNode
	for _, name := range []string{"wait-a", "wait-b", "wait-c"} {
		dir := t.TempDir()
		cfg := strings.Replace(postgresConfig(t), `  instance: ""`, "  instance: "+name, 1)
		writeFile(t, dir, "config.yaml", cfg+strings.Replace(scheduleBlock, "@every 1s", "@every 2s", 1))
		nodes = append(nodes, &clusterNode{name: name, p: startBot(t, dir, baseEnv(dir, "GATEHOUSE_DSN="+dsn))})
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	conn, err := pgx.Connect(ctx, dsn)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	requests := func() int {
		n := 0
		for _, node := range nodes {
			node.runs() // reads what stdout has
			n += strings.Count(node.p.stdout(), "Approval needed: shell")
		}
		return n
	}
	testutil.WaitFor(t, "the first run's approval request", func() bool { return requests() > 0 })
	first := time.Now()
	// Five slots later (each claimed by one instance or another, which
	// then ran it or skipped it), there is still one request.
	testutil.WaitFor(t, "five slots claimed after the first request", func() bool {
		after := 0
		for _, c := range claimedSlots(t, conn) {
			if c.slot.After(first) {
				after++
			}
		}
		if after < 5 {
			time.Sleep(50 * time.Millisecond)
			return false
		}
		return true
	})
	if n := requests(); n != 1 {
		for _, node := range nodes {
			t.Logf("%s:\n%s", node.name, node.p.stdout())
		}
		t.Fatalf("%d approval requests while the first run waited; want 1", n)
	}
}

// TestScheduleClusterSkipsWhileATurnRuns: with three real bots on one
// database, an "@every 2s" schedule whose turn is still running (the
// model has not answered) holds the next slots on every instance, as it
// does on one bot: the model is asked once while the first turn runs.
// When the instance running it is SIGKILLed, another runs the schedule
// once the run's lease has expired (store.lease_ttl).
func TestScheduleClusterSkipsWhileATurnRuns(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	const prompt = "slow report"
	release := make(chan struct{})
	var releaseOnce sync.Once
	srv := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		if r.LastUser() == prompt {
			<-release // the first turn runs until the test lets it end
		}
		return fakeopenai.Text("MODEL: done.")
	})
	// Before the server closes (cleanups run last first), which waits
	// for its handlers.
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	var nodes []*clusterNode
	for _, name := range []string{"turn-a", "turn-b", "turn-c"} {
		dir := t.TempDir()
		cfg := fakeConfig(srv.URL(), "sk-fake", `    - {tool: "*", decision: allow}`, "info")
		cfg = strings.Replace(cfg, "  timeout: 20s", "  timeout: 10m", 1)
		cfg = strings.Replace(cfg, "store:\n  dsn: gatehouse.db",
			"store:\n  driver: postgres\n  dsn: ${GATEHOUSE_DSN}\n  lease_ttl: 3s\n  instance: "+name, 1)
		cfg += "schedules:\n  - {name: tick, cron: \"@every 2s\", conversation: \"console:local\", prompt: \"" + prompt + "\"}\n"
		writeFile(t, dir, "config.yaml", cfg)
		nodes = append(nodes, &clusterNode{name: name, p: startBot(t, dir, baseEnv(dir, "GATEHOUSE_DSN="+dsn))})
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	conn, err := pgx.Connect(ctx, dsn)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	asked := func() int {
		n := 0
		for _, r := range srv.Requests() {
			if r.LastUser() == prompt {
				n++
			}
		}
		return n
	}
	testutil.WaitFor(t, "the first run's request to the model", func() bool { return asked() > 0 })
	first := time.Now()
	testutil.WaitFor(t, "five slots claimed after the first run started", func() bool {
		after := 0
		for _, c := range claimedSlots(t, conn) {
			if c.slot.After(first) {
				after++
			}
		}
		if after < 5 {
			time.Sleep(50 * time.Millisecond)
			return false
		}
		return true
	})
	if n := asked(); n != 1 {
		t.Fatalf("the model was asked %d times while the first run's turn was running; want 1\nclaims: %v", n, claimedSlots(t, conn))
	}

	// The instance running it dies: its run's lease expires after
	// lease_ttl and another instance runs the schedule again.
	var holder string
	if err := conn.QueryRow(context.Background(), `SELECT holder FROM leases WHERE name = 'schedule:tick'`).Scan(&holder); err != nil {
		t.Fatalf("the running instance holds no lease schedule:tick: %v", err)
	}
	for _, n := range nodes {
		if n.name == holder {
			n.p.kill9()
		}
	}
	testutil.WaitFor(t, "a run on another instance once the dead one's lease expired", func() bool { return asked() > 1 })
	releaseOnce.Do(func() { close(release) })
}
