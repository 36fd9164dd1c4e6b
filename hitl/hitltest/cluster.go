package hitltest

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// Cluster is one database that several instances share, as a test opens
// it: each Open is one instance's store.
type Cluster struct {
	// Open opens a new store on the shared database, as an instance does;
	// it is closed when the test ends (and may be closed before, through
	// io.Closer, as a dying instance's is).
	Open func(t *testing.T) hitl.SharedStore
	// Heartbeat records through s that the instance name is alive now.
	Heartbeat func(t *testing.T, s hitl.SharedStore, name string)
}

// ClusterContract checks brokers of several instances on one shared store:
// an approval raised on one is resolved on another, once; a call approved
// runs once, on the instance that claimed it; the run of an instance that
// died is marked interrupted once, after the lease, and never run again;
// a starting instance leaves the live runs of the others alone. newCluster
// must return a new, empty database for each call.
func ClusterContract(t *testing.T, newCluster func(t *testing.T) Cluster) {
	t.Run("ApproveElsewhere", func(t *testing.T) { testApproveElsewhere(t, newCluster(t)) })
	t.Run("ApproveOnBothAtOnce", func(t *testing.T) { testApproveOnBoth(t, newCluster(t)) })
	t.Run("RaisingInstanceGone", func(t *testing.T) { testRaiserGone(t, newCluster(t)) })
	t.Run("DeadRunnerInterrupted", func(t *testing.T) { testDeadRunner(t, newCluster(t)) })
	t.Run("StartLeavesLiveRunsAlone", func(t *testing.T) { testStartLeavesLiveRuns(t, newCluster(t)) })
	t.Run("OutstandingElsewhere", func(t *testing.T) { testOutstandingElsewhere(t, newCluster(t)) })
	t.Run("ExpiresOnce", func(t *testing.T) { testExpiresOnce(t, newCluster(t)) })
	t.Run("RequestMessageUpdatedByItsInstance", func(t *testing.T) { testPromptUpdated(t, newCluster(t)) })
	t.Run("StandingAllowsEverywhere", func(t *testing.T) { testStandingEverywhere(t, newCluster(t)) })
	t.Run("GrantsEverywhere", func(t *testing.T) { testGrantsEverywhere(t, newCluster(t)) })
	t.Run("StatusShowsRunsElsewhere", func(t *testing.T) { testStatusElsewhere(t, newCluster(t)) })
}

// The cast of the cluster tests.
var (
	clusterConv = core.Conversation{Gateway: "alpha", Chat: "A1"}
	clusterAsk  = core.Identity("alpha:u1")
	clusterBoss = core.Identity("beta:boss")
	clusterCall = llm.ToolCall{ID: "call_1", Name: "shell", Args: `{"command":"touch ran"}`}
)

// node is one instance: its store, its broker and a dispatcher that
// records what the broker did through it.
type node struct {
	name  string
	store hitl.SharedStore
	b     *hitl.Broker
	// runs counts the tool calls this instance ran.
	runs atomic.Int32
	// gate, when not nil, holds each tool call until it is closed.
	gate chan struct{}

	mu       sync.Mutex
	prompts  []core.ApprovalPrompt
	resolved []core.ApprovalResolution
	replies  []string

	stop func() // ends the broker's Run and waits for it
}

// Act runs a tool call (counted, held by gate) or records a reply.
func (n *node) Act(ctx context.Context, a core.Action) (core.Result, error) {
	if a.Kind != core.ActionTool {
		n.mu.Lock()
		n.replies = append(n.replies, a.Text)
		n.mu.Unlock()
		return core.Result{}, nil
	}
	n.runs.Add(1)
	if n.gate != nil {
		select {
		case <-n.gate:
		case <-ctx.Done():
			return core.Result{}, fmt.Errorf("tool run: %w", ctx.Err())
		}
	}
	return core.Result{Output: "ran"}, nil
}

// Prompt records a request.
func (n *node) Prompt(_ context.Context, _ core.Conversation, _ string, p core.ApprovalPrompt) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.prompts = append(n.prompts, p)
	return nil
}

// Resolved records a resolution this instance's gateways were told of.
func (n *node) Resolved(_ context.Context, _ core.Conversation, r core.ApprovalResolution) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.resolved = append(n.resolved, r)
}

// Submit takes an outcome signal; its turn ends at once.
func (n *node) Submit(_ context.Context, s core.Signal) error {
	if s.Done != nil {
		s.Done()
	}
	return nil
}

// resolutions returns the statuses this instance's gateways were told of
// for token.
func (n *node) resolutions(token string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, r := range n.resolved {
		if r.Token == token {
			out = append(out, r.Status)
		}
	}
	return out
}

// options are what a test changes of a node's broker.
type options struct {
	leaseTTL time.Duration
	ttl      time.Duration
	gate     chan struct{}
	noRun    bool // do not start Run
}

// start opens a store on c and starts the broker of instance name on it.
func start(t *testing.T, c Cluster, name string, o options) *node {
	t.Helper()
	n := &node{name: name, store: c.Open(t), gate: o.gate}
	b, err := hitl.NewBroker(n, hitl.Options{
		TTL: o.ttl, Approvers: []core.Identity{clusterBoss}, AllowSelfApproval: true,
		Store: n.store, Audit: auditOf(t, n.store), Standing: standingOf(t, n.store), Instance: name, LeaseTTL: o.leaseTTL,
		SweepEvery: 20 * time.Millisecond, Grace: time.Millisecond, Log: zerolog.Nop(),
	})
	if err != nil {
		t.Fatalf("NewBroker(%s): %v", name, err)
	}
	n.b = b
	n.stop = func() {}
	if !o.noRun {
		n.run(t)
	}
	return n
}

// run starts the broker's Run until stop or the end of the test.
func (n *node) run(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = n.b.Run(ctx)
	}()
	var once sync.Once
	n.stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(n.stop)
	select {
	case <-n.b.Ready():
	case <-done:
		t.Fatalf("%s: Run ended before it was ready", n.name)
	}
}

// auditOf is the store's audit log; the contract's stores keep one.
func auditOf(t *testing.T, s hitl.SharedStore) hitl.Audit {
	t.Helper()
	a, ok := s.(hitl.Audit)
	if !ok {
		t.Fatalf("%T keeps no audit log (hitl.Audit)", s)
	}
	return a
}

// standingOf is the store's standing allows; the contract's stores keep
// them.
func standingOf(t *testing.T, s hitl.SharedStore) hitl.StandingStore {
	t.Helper()
	st, ok := s.(hitl.StandingStore)
	if !ok {
		t.Fatalf("%T keeps no standing allows (hitl.StandingStore)", s)
	}
	return st
}

// raise holds the contract's call on n and returns the token.
func (n *node) raise(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	if _, err := n.b.Hold(ctx, core.Held{Conv: clusterConv, From: clusterAsk, Call: clusterCall, Rule: "shell"}); err != nil {
		t.Fatalf("%s: Hold: %v", n.name, err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.prompts) == 0 {
		t.Fatalf("%s: Hold sent no request", n.name)
	}
	return n.prompts[len(n.prompts)-1].Token
}

// approve sends "/approve token" from the approver to n.
func (n *node) approve(t *testing.T, token string) {
	t.Helper()
	n.command(t, "/approve "+token)
}

// command sends text, a command, from the approver to n.
func (n *node) command(t *testing.T, text string) {
	t.Helper()
	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "beta", Chat: "B1"}, From: clusterBoss, Text: text}
	if !n.b.HandleCommand(context.Background(), s) {
		t.Fatalf("%s: %q was not taken as a command", n.name, text)
	}
}

// status returns the token's status as s stores it.
func status(t *testing.T, s hitl.Store, token string) record.Approval {
	t.Helper()
	a, err := s.Approval(context.Background(), token)
	if err != nil {
		t.Fatalf("Approval(%s): %v", token, err)
	}
	return a
}

// waitStatus waits until the token's approval has status want in s.
func waitStatus(t *testing.T, s hitl.Store, token string, want record.Status) record.Approval {
	t.Helper()
	var a record.Approval
	testutil.WaitFor(t, "approval "+string(want), func() bool {
		a = status(t, s, token)
		return a.Status == want
	})
	return a
}

// outcomes counts the audit entries with each outcome.
func outcomes(t *testing.T, s hitl.SharedStore) map[string]int {
	t.Helper()
	es, err := auditOf(t, s).QueryAudit(context.Background(), record.AuditFilter{})
	if err != nil {
		t.Fatalf("QueryAudit: %v", err)
	}
	out := make(map[string]int)
	for _, e := range es {
		out[e.Outcome]++
	}
	return out
}

// checkAudited fails unless each outcome of want was audited exactly that
// many times (outcomes not named are not checked).
func checkAudited(t *testing.T, s hitl.SharedStore, want map[string]int) {
	t.Helper()
	got := outcomes(t, s)
	for o, n := range want {
		if got[o] != n {
			t.Errorf("audit has %d %q entries, want %d (all: %v)", got[o], o, n, got)
		}
	}
}

// stopAll stops the brokers of ns, each once its runs are recorded.
func stopAll(ns ...*node) {
	for _, n := range ns {
		n.stop()
	}
}

// testApproveElsewhere: raised on A, approved on B: it runs once, on B,
// which the store records as its runner.
func testApproveElsewhere(t *testing.T, c Cluster) {
	a := start(t, c, "a", options{})
	b := start(t, c, "b", options{})
	tok := a.raise(t)
	b.approve(t, tok)
	got := waitStatus(t, a.store, tok, record.StatusExecuted)
	if got.Instance != "b" {
		t.Errorf("the approval's instance = %q, want b (the instance that claimed it runs it)", got.Instance)
	}
	if ra, rb := a.runs.Load(), b.runs.Load(); ra != 0 || rb != 1 {
		t.Errorf("runs: a %d, b %d; want a 0, b 1", ra, rb)
	}
	stopAll(a, b)
	checkAudited(t, a.store, map[string]int{"requested": 1, "approved": 1, "executed": 1})
}

// testApproveOnBoth: /approve reaches A and B at once: one claim wins,
// the call runs once.
func testApproveOnBoth(t *testing.T, c Cluster) {
	a := start(t, c, "a", options{})
	b := start(t, c, "b", options{})
	for range 5 {
		tok := a.raise(t)
		var wg sync.WaitGroup
		for _, n := range []*node{a, b, a, b} {
			wg.Go(func() { n.approve(t, tok) })
		}
		wg.Wait()
		waitStatus(t, a.store, tok, record.StatusExecuted)
	}
	if got := a.runs.Load() + b.runs.Load(); got != 5 {
		t.Errorf("5 approvals, each approved four times on two instances at once, ran %d times; want 5", got)
	}
	stopAll(a, b)
	checkAudited(t, a.store, map[string]int{"approved": 5, "executed": 5})
}

// testRaiserGone: A raised the request and its store closed (A died); B
// approves it and it runs once, on B.
func testRaiserGone(t *testing.T, c Cluster) {
	a := start(t, c, "a", options{})
	b := start(t, c, "b", options{})
	tok := a.raise(t)
	a.stop()
	if cl, ok := a.store.(io.Closer); ok {
		if err := cl.Close(); err != nil {
			t.Fatalf("closing A's store: %v", err)
		}
	}
	b.approve(t, tok)
	waitStatus(t, b.store, tok, record.StatusExecuted)
	if ra, rb := a.runs.Load(), b.runs.Load(); ra != 0 || rb != 1 {
		t.Errorf("runs: a %d, b %d; want a 0, b 1", ra, rb)
	}
	stopAll(b)
	checkAudited(t, b.store, map[string]int{"approved": 1, "executed": 1})
}

// testDeadRunner: A claimed a call to run it and died (its heartbeat
// stopped): after the lease, B and C, both sweeping, mark it interrupted
// once between them, audited once; nobody runs it.
func testDeadRunner(t *testing.T, c Cluster) {
	const lease = 300 * time.Millisecond
	a := start(t, c, "a", options{noRun: true})
	tok := a.raise(t)
	c.Heartbeat(t, a.store, "a")
	if _, err := a.store.ClaimApprovalOn(context.Background(), "a", tok, record.StatusExecuting, clusterBoss, "", time.Now()); err != nil {
		t.Fatalf("A's claim: %v", err)
	}
	// A dies here: no heartbeat, no run.
	b := start(t, c, "b", options{leaseTTL: lease})
	cc := start(t, c, "c", options{leaseTTL: lease})
	got := waitStatus(t, b.store, tok, record.StatusInterrupted)
	if got.Instance != "a" {
		t.Errorf("interrupted approval's instance = %q, want a", got.Instance)
	}
	// Another look by each finds nothing more to interrupt.
	for _, n := range []*node{b, cc} {
		if k, err := n.b.Recover(context.Background()); err != nil || k != 0 {
			t.Errorf("%s: Recover after the interruption = %d, %v; want 0, nil", n.name, k, err)
		}
	}
	stopAll(b, cc)
	if got := a.runs.Load() + b.runs.Load() + cc.runs.Load(); got != 0 {
		t.Errorf("a run interrupted by its instance's death was run again %d times", got)
	}
	checkAudited(t, b.store, map[string]int{"interrupted": 1, "executed": 0, "failed": 0})
}

// testStartLeavesLiveRuns: A runs an approved call (its heartbeat fresh);
// B starts (Recover, then Run's first sweep) and leaves it running; it ends
// executed, run once.
func testStartLeavesLiveRuns(t *testing.T, c Cluster) {
	gate := make(chan struct{})
	a := start(t, c, "a", options{gate: gate, leaseTTL: time.Hour})
	tok := a.raise(t)
	c.Heartbeat(t, a.store, "a")
	a.approve(t, tok)
	testutil.WaitFor(t, "A's run to start", func() bool { return a.runs.Load() == 1 })
	b := start(t, c, "b", options{leaseTTL: time.Hour, noRun: true})
	if n, err := b.b.Recover(context.Background()); err != nil || n != 0 {
		t.Errorf("B's Recover = %d, %v; want 0, nil (A's run is live)", n, err)
	}
	b.run(t) // its first sweep is done once it is ready
	if got := status(t, a.store, tok); got.Status != record.StatusExecuting {
		t.Fatalf("after B started, A's live run is %s, want executing", got.Status)
	}
	close(gate)
	waitStatus(t, a.store, tok, record.StatusExecuted)
	stopAll(a, b)
	checkAudited(t, a.store, map[string]int{"executed": 1, "interrupted": 0})
}

// testOutstandingElsewhere: while B runs the call A's turn asked for, A
// (whose schedules ask it) says the requester still has work outstanding.
func testOutstandingElsewhere(t *testing.T, c Cluster) {
	gate := make(chan struct{})
	a := start(t, c, "a", options{})
	b := start(t, c, "b", options{gate: gate})
	tok := a.raise(t)
	b.approve(t, tok)
	testutil.WaitFor(t, "B's run to start", func() bool { return b.runs.Load() == 1 })
	out, err := a.b.Outstanding(context.Background(), clusterAsk)
	if err != nil || !out {
		t.Errorf("A's Outstanding while B runs the approved call = %v, %v; want true", out, err)
	}
	close(gate)
	waitStatus(t, a.store, tok, record.StatusExecuted)
}

// testExpiresOnce: a request raised on A, which died, expires on time
// through B and C, announced and audited once.
func testExpiresOnce(t *testing.T, c Cluster) {
	a := start(t, c, "a", options{ttl: 200 * time.Millisecond, noRun: true})
	tok := a.raise(t)
	b := start(t, c, "b", options{})
	cc := start(t, c, "c", options{})
	waitStatus(t, b.store, tok, record.StatusExpired)
	stopAll(b, cc)
	checkAudited(t, b.store, map[string]int{"expired": 1})
}

// testPromptUpdated: raised on A (whose gateways sent the request
// messages), approved on B: A's gateways are told the outcome, so that
// they update the request messages in place.
func testPromptUpdated(t *testing.T, c Cluster) {
	a := start(t, c, "a", options{})
	b := start(t, c, "b", options{})
	tok := a.raise(t)
	b.approve(t, tok)
	waitStatus(t, a.store, tok, record.StatusExecuted)
	testutil.WaitFor(t, "A's gateways to hear the outcome", func() bool {
		return slices.Contains(a.resolutions(tok), string(record.StatusExecuted))
	})
}

// testStandingEverywhere: "/approve TOKEN always" on B allows the call on
// A too, and "/unallow" on A removes it for B.
func testStandingEverywhere(t *testing.T, c Cluster) {
	ctx := context.Background()
	a := start(t, c, "a", options{})
	b := start(t, c, "b", options{})
	tok := a.raise(t)
	b.command(t, "/approve "+tok+" always")
	waitStatus(t, a.store, tok, record.StatusExecuted)
	if !a.b.StandingAllowed(ctx, clusterCall.Name, clusterCall.Args) {
		t.Fatal("a standing allow added on B does not apply on A")
	}
	list, err := a.b.StandingAllows(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("A's standing allows = %v, %v; want the one B added", list, err)
	}
	a.command(t, fmt.Sprintf("/unallow %d", list[0].ID))
	if b.b.StandingAllowed(ctx, clusterCall.Name, clusterCall.Args) {
		t.Error("a standing allow removed on A still applies on B")
	}
}

// testStatusElsewhere: while B runs the call A's conversation asked for,
// /status on A says it runs, and on which instance.
func testStatusElsewhere(t *testing.T, c Cluster) {
	gate := make(chan struct{})
	a := start(t, c, "a", options{})
	b := start(t, c, "b", options{gate: gate})
	tok := a.raise(t)
	b.approve(t, tok)
	testutil.WaitFor(t, "B's run to start", func() bool { return b.runs.Load() == 1 })
	lines := a.b.StatusLines(context.Background(), clusterConv)
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "running") && strings.Contains(l, "on b") }) {
		t.Errorf("A's /status while B runs the conversation's approved call:\n%s\nwant a line saying it runs on b", strings.Join(lines, "\n"))
	}
	close(gate)
	waitStatus(t, a.store, tok, record.StatusExecuted)
}
