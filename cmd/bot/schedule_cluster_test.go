package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
// run every slot it claimed. The runs are read before the claims, so a
// claim made in between can only make the runs look fewer. It returns the
// claims and whether the runs matched them.
func checkSlots(t *testing.T, conn *pgx.Conn, nodes []*clusterNode) ([]slotClaim, bool) {
	t.Helper()
	runs := map[string]int{}
	for _, n := range nodes {
		runs[n.name] = n.runs()
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
		if runs[n.name] > claimed[n.name] {
			t.Fatalf("%s ran %d slots but claimed %d: a slot ran twice or without its claim\nclaims: %v",
				n.name, runs[n.name], claimed[n.name], claims)
		}
		settled = settled && runs[n.name] == claimed[n.name]
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
