package hitl_test

import (
	"context"
	"errors"
	"fmt"
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

// The cast: two in-process gateways, alpha and beta.
var (
	convA   = core.Conversation{Gateway: "alpha", Chat: "A1"}   // where the request is raised
	convB   = core.Conversation{Gateway: "beta", Chat: "B1"}    // where an approver answers
	convDM  = core.Conversation{Gateway: "beta", Chat: "owner"} // a notify target
	asker   = core.Identity("alpha:u1")
	boss    = core.Identity("beta:boss")
	admin   = core.Identity("alpha:admin")
	eve     = core.Identity("beta:eve")
	lsCall  = llm.ToolCall{ID: "call_1", Name: "shell", Args: `{"command":"ls -la /srv"}`}
	t0      = time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC)
	ttl     = 15 * time.Minute
	outcome = core.KindApprovalOutcome
)

// gateway is an in-process test gateway without buttons: the actuator for
// its conversations. It records what the broker sent through the fake
// dispatcher.
type gateway struct {
	name string
	fail bool
	// before, when set, is called with each reply before it is recorded.
	before func(a core.Action)

	mu       sync.Mutex
	replies  []sent
	resolved map[core.Conversation]*core.ApprovalResolution // told, not yet followed by a reply
}

// sent is one message that reached a conversation: a reply, or an
// approval request (Approval set; Text is the request with its hint, as a
// gateway without buttons gets it). Resolution is the resolution the
// gateway was told of just before this reply, if any: the broker tells
// the gateway (Dispatcher.Resolved), then sends the notice.
type sent struct {
	core.Action
	Request    string // an approval request's text as the broker wrote it, without the hint
	Approval   *core.ApprovalPrompt
	Resolution *core.ApprovalResolution
}

// Act records a reply.
func (g *gateway) Act(_ context.Context, a core.Action) (core.Result, error) {
	if a.Kind != core.ActionReply {
		return core.Result{}, fmt.Errorf("%s: not a reply", g.name)
	}
	return core.Result{}, g.record(sent{Action: a})
}

// record delivers s, attaching the resolution told before it.
func (g *gateway) record(s sent) error {
	if g.fail {
		return errors.New(g.name + ": delivery failed")
	}
	if g.before != nil {
		g.before(s.Action)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s.Resolution = g.resolved[s.Conv]
	delete(g.resolved, s.Conv)
	g.replies = append(g.replies, s)
	return nil
}

// resolve notes r for the next reply in conv.
func (g *gateway) resolve(conv core.Conversation, r core.ApprovalResolution) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.resolved == nil {
		g.resolved = make(map[core.Conversation]*core.ApprovalResolution)
	}
	g.resolved[conv] = &r
}

// in returns the messages sent to conv.
func (g *gateway) in(conv core.Conversation) []sent {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []sent
	for _, a := range g.replies {
		if a.Conv == conv {
			out = append(out, a)
		}
	}
	return out
}

// dispatcher is a fake core.Dispatcher: replies go to the gateway named by
// the conversation, tool calls to a counting tool runner, submitted
// signals to a channel.
type dispatcher struct {
	gateways map[string]*gateway
	signals  chan core.Signal

	runs    atomic.Int32
	mu      sync.Mutex
	calls   []core.Action
	result  core.Result
	runErr  error
	running func(ctx context.Context) // called during each run, e.g. to block
}

func newDispatcher(gws ...*gateway) *dispatcher {
	d := &dispatcher{gateways: map[string]*gateway{}, signals: make(chan core.Signal, 100)}
	for _, g := range gws {
		d.gateways[g.name] = g
	}
	d.result = core.Result{Output: "total 0\ndrwxr-xr-x app"}
	return d
}

// Act dispatches a reply to its gateway or runs a tool call.
func (d *dispatcher) Act(ctx context.Context, a core.Action) (core.Result, error) {
	if a.Kind == core.ActionTool {
		d.runs.Add(1)
		d.mu.Lock()
		d.calls = append(d.calls, a)
		run := d.running
		d.mu.Unlock()
		if run != nil {
			run(ctx)
		}
		if err := ctx.Err(); err != nil {
			return core.Result{}, fmt.Errorf("tool run: %w", err)
		}
		return d.result, d.runErr
	}
	g, ok := d.gateways[a.Conv.Gateway]
	if !ok {
		return core.Result{}, fmt.Errorf("no actuator %q", a.Conv.Gateway)
	}
	return g.Act(ctx, a)
}

// Prompt delivers an approval request as the Engine does to a gateway
// without buttons: the text with its hint, as a reply. The prompt is kept
// beside it for the tests.
func (d *dispatcher) Prompt(_ context.Context, conv core.Conversation, text string, p core.ApprovalPrompt) error {
	g, ok := d.gateways[conv.Gateway]
	if !ok {
		return fmt.Errorf("no actuator %q", conv.Gateway)
	}
	return g.record(sent{Action: core.Action{Kind: core.ActionReply, Conv: conv, Text: p.WithHint(text)}, Request: text, Approval: &p})
}

// Resolved tells conv's gateway of r; the next reply there carries it.
func (d *dispatcher) Resolved(_ context.Context, conv core.Conversation, r core.ApprovalResolution) {
	if g, ok := d.gateways[conv.Gateway]; ok {
		g.resolve(conv, r)
	}
}

// Submit records a signal.
func (d *dispatcher) Submit(ctx context.Context, s core.Signal) error {
	select {
	case d.signals <- s:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// harness is a running broker with two gateways.
type harness struct {
	b        *hitl.Broker
	d        *dispatcher
	alpha    *gateway
	beta     *gateway
	store    *hitl.MemoryStore
	standing *hitl.MemoryStanding
	clock    *clock
	logs     *testutil.SyncBuffer
	// stop ends Run and waits for it to return (also done at cleanup).
	stop func()
}

// newHarness starts a broker; opts adjusts the options before NewBroker.
func newHarness(t *testing.T, opts func(*hitl.Options)) *harness {
	t.Helper()
	h := &harness{
		alpha: &gateway{name: "alpha"}, beta: &gateway{name: "beta"},
		store: hitl.NewMemoryStore(), standing: hitl.NewMemoryStanding(),
		clock: &clock{now: t0}, logs: &testutil.SyncBuffer{},
	}
	h.d = newDispatcher(h.alpha, h.beta)
	o := hitl.Options{
		TTL:               ttl,
		Approvers:         []core.Identity{boss, admin},
		Notify:            []core.Conversation{convDM},
		AllowSelfApproval: true,
		Store:             h.store,
		Standing:          h.standing,
		Now:               h.clock.Now,
		Log:               zerolog.New(h.logs),
		SweepEvery:        time.Hour, // tests call ExpireDue themselves
	}
	if opts != nil {
		opts(&o)
	}
	b, err := hitl.NewBroker(h.d, o)
	if err != nil {
		t.Fatalf("NewBroker: %v", err)
	}
	h.b = b
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = b.Run(ctx)
	}()
	h.stop = func() { cancel(); <-done }
	t.Cleanup(h.stop)
	<-b.Ready()
	return h
}

// idle waits until no approved action is running and every outcome signal
// has been submitted: runs happen in the broker's goroutines.
func (h *harness) idle(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.b.WaitIdle(ctx); err != nil {
		t.Fatalf("broker not idle: %v", err)
	}
}

// hold raises call in convA as asker and returns the token from the request
// message, checking that the LLM-facing text does not contain it.
func (h *harness) hold(t *testing.T, call llm.ToolCall) string {
	t.Helper()
	text, err := h.b.Hold(context.Background(), core.Held{Conv: convA, From: asker, Call: call, Rule: "shell → approve", Reason: "shell needs approval"})
	if err != nil {
		t.Fatalf("Hold: %v", err)
	}
	reqs := h.alpha.in(convA)
	if len(reqs) == 0 || reqs[len(reqs)-1].Approval == nil {
		t.Fatalf("no request message in %s", convA)
	}
	tok := reqs[len(reqs)-1].Approval.Token
	if strings.Contains(text, tok) {
		t.Fatalf("hold text for the LLM contains the token: %q", text)
	}
	return tok
}

// say delivers a typed message from id in conv and reports whether the
// broker took it as a command.
func (h *harness) say(id core.Identity, conv core.Conversation, text string) bool {
	return h.b.HandleCommand(context.Background(), core.Signal{Kind: core.KindMessage, Conv: conv, From: id, Text: text, MessageID: "m1"})
}

// lastReply returns the last message sent to conv.
func (h *harness) lastReply(t *testing.T, conv core.Conversation) sent {
	t.Helper()
	g := h.d.gateways[conv.Gateway]
	replies := g.in(conv)
	if len(replies) == 0 {
		t.Fatalf("no reply in %s", conv)
	}
	return replies[len(replies)-1]
}

// repliedAll reports whether one message sent to conv contains every
// part: for an acknowledgement that an approved call's outcome, sent from
// another goroutine, may follow or precede.
func (h *harness) repliedAll(conv core.Conversation, parts ...string) bool {
	for _, s := range h.d.gateways[conv.Gateway].in(conv) {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(s.Text, p)
		}
		if all {
			return true
		}
	}
	return false
}

// replied reports whether a message sent to conv contains part.
func (h *harness) replied(conv core.Conversation, part string) bool {
	for _, s := range h.d.gateways[conv.Gateway].in(conv) {
		if strings.Contains(s.Text, part) {
			return true
		}
	}
	return false
}

// signal waits for the next submitted signal.
func (h *harness) signal(t *testing.T) core.Signal {
	t.Helper()
	select {
	case s := <-h.d.signals:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("no outcome signal was submitted")
	}
	return core.Signal{}
}

// noSignal checks that no outcome signal was queued so far: it resolves a
// marker request and expects the marker's outcome to be the next signal
// (Run submits in order). Call it last: it adds replies and audit entries.
func (h *harness) noSignal(t *testing.T) {
	t.Helper()
	marker := llm.ToolCall{ID: "marker", Name: "marker", Args: `{}`}
	text, err := h.b.Hold(context.Background(), core.Held{Conv: convDM, From: boss, Call: marker})
	if err != nil {
		t.Fatal(err)
	}
	_ = text
	tok := h.lastReply(t, convDM).Approval.Token
	h.say(boss, convDM, "/deny "+tok)
	if s := h.signal(t); !strings.Contains(s.Text, "held marker call") {
		t.Fatalf("unexpected signal before the marker: %+v", s)
	}
}

// status returns the stored status of token.
func (h *harness) status(t *testing.T, token string) record.Status {
	t.Helper()
	a, err := h.store.Approval(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	return a.Status
}

// audit returns the outcomes in the audit log, in order.
func (h *harness) audit(t *testing.T) []string {
	t.Helper()
	es, err := h.store.QueryAudit(context.Background(), record.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Outcome)
	}
	return out
}

// mustContain fails unless s contains every part.
func mustContain(t *testing.T, what, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("%s does not contain %q:\n%s", what, p, s)
		}
	}
}
