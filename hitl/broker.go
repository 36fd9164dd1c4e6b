package hitl

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// DefaultTTL is how long an approval waits for a decision when Options.TTL
// is zero.
const DefaultTTL = 15 * time.Minute

// Options configures a Broker.
type Options struct {
	// TTL is how long a request waits for a decision (DefaultTTL if zero).
	TTL time.Duration
	// Page, when set, is the address of a request's page in the web
	// console (http.console), which each request then carries.
	Page func(token string) string
	// Approvers are the identities whose messages and button presses may
	// resolve approvals. It must not be empty: deny by default.
	Approvers []core.Identity
	// People groups the identities of one person (hitl.people): with
	// AllowSelfApproval false, no identity of the person who caused a
	// request may approve it. An identity in no group is a person of its
	// own; an identity may be in one group only.
	People [][]core.Identity
	// Notify are conversations that receive every request besides the one
	// that asked (e.g. the owner's DM).
	Notify []core.Conversation
	// AllowSelfApproval lets the person who caused a request approve it.
	// When false (four-eyes), the requester may still deny it (withdrawing a
	// request only reduces risk) but another person must approve it. The
	// configuration key hitl.allow_self_approval defaults to true; the zero
	// value here is the stricter false.
	AllowSelfApproval bool
	// Store keeps approvals; a MemoryStore when nil.
	Store Store
	// Audit records decisions and runs; Store's MemoryStore (or a new one)
	// when nil.
	Audit Audit
	// Standing keeps standing allows; a MemoryStanding when nil.
	Standing StandingStore
	Grants   GrantStore // grants ("/approve TOKEN for 30m"); nil: see defaultGrants
	// Profiles add approvers to the requests of their conversations
	// (core.Profiles); nil adds none.
	Profiles ProfileApprovers
	// Workspace is the directory the tools work in (tools.workspace). A
	// standing allow binds the content of every file in it that its
	// arguments name; empty binds none (exact arguments only).
	Workspace string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Log receives warnings (refused attempts, failed deliveries).
	Log zerolog.Logger
	// NewToken draws a token; NewToken when nil (tests inject collisions).
	NewToken func() (string, error)
	// SweepEvery is how often Run expires overdue approvals; TTL/10 bounded
	// to [1s, 30s] when zero.
	SweepEvery time.Duration
	// Grace is how long approved actions still running may go on once
	// Run's context has ended before they are cancelled; DefaultGrace when
	// zero.
	Grace time.Duration
	// Metrics records approvals by outcome and their time to a decision;
	// nil records nothing.
	Metrics *metrics.Registry
	// Instance names this instance among those sharing Store
	// (store.instance). With a SharedStore it is recorded as the runner of
	// each approved call this broker claims; empty keeps the one-process
	// behaviour whatever the store.
	Instance string
	// Policy judges an approved call again just before it runs, by this
	// instance's policy as it is now (the engine's gates, core.Engine's
	// Rejudge): a reload since the call was held, or another instance
	// sharing the store with other rules, may deny what was held. A Deny
	// refuses the run; nil runs every approved call.
	Policy Rejudger
	// LeaseTTL is how long an approved run of an instance whose heartbeat
	// stopped waits before it is marked interrupted (store.lease_ttl);
	// DefaultLeaseTTL when zero. Only a SharedStore uses it.
	LeaseTTL time.Duration
	// Nudges remind of and escalate a request nobody answers
	// (hitl.remind_after, hitl.escalate); the zero value does neither.
	Nudges Nudges
	// Fence, with a SharedStore, guards each approved run: the context it
	// gives ends when this instance could not renew its heartbeat for
	// part of LeaseTTL, before another instance may mark the run
	// interrupted (cluster.Fence). A run it stopped is recorded
	// interrupted, if no other instance recorded an outcome first. Nil
	// guards nothing.
	Fence Fence
}

// Fence stops this instance's approved runs before the other instances
// sharing the store may take it for a dead one (cluster.Fence).
type Fence interface {
	// Guard returns a context derived from ctx that also ends when this
	// instance may soon be taken for dead, and the func that releases it.
	Guard(ctx context.Context) (context.Context, context.CancelFunc)
}

// Rejudger decides a tool call as the engine's gates do now, without
// holding it (core.Engine implements it). The broker runs an approved
// call only when the verdict is not core.Deny: a hold is what a human
// has just answered.
type Rejudger interface {
	Rejudge(ctx context.Context, a core.Action) core.Decision
}

// Broker holds actions for a human and resolves them from any gateway. It
// implements core.Holder, core.CommandHandler, core.StandingAllows and
// gateways.Approvals (checked in app: hitl does not import
// gateways). Approved actions run in the broker's own goroutines, not the
// approver's. Run must be running for expiry, for the outcome
// signals that tell the LLM what became of a held action, and to stop the
// runs at shutdown.
type Broker struct {
	d         core.Dispatcher
	o         Options
	approvers atomic.Pointer[approverSet] // replaced whole by SetApprovers, people included
	nudges    atomic.Pointer[Nudges]      // replaced whole by SetNudges
	log       zerolog.Logger

	mu       sync.Mutex
	outbox   []core.Signal // outcome signals waiting for Run to submit them
	wake     chan struct{} // signalled when outbox grows
	running  int           // approved actions running (or about to)
	stopping bool          // Run is stopping: no new runs
	settled  chan struct{} // closed and replaced when the broker becomes idle

	// runCtx is the context approved actions run under: owned by the
	// broker, not by whoever approved, and cancelled by Run only after
	// Options.Grace once its own context has ended.
	runCtx     context.Context
	cancelRuns context.CancelFunc
	runs       sync.WaitGroup
	active     map[int64]*run // runs going on, by a number of their own; under mu
	nextRun    int64

	// followUps counts, by requester, outcome signals submitted to the
	// engine whose turn has not finished; under mu.
	followUps map[core.Identity]int
	// deciding counts, by requester, approvals that have left (or are
	// leaving) pending whose run has not started or whose outcome is not
	// queued yet (see decide); under mu.
	deciding map[core.Identity]int

	ready     chan struct{} // closed when Run's start-up work is done
	readyOnce sync.Once

	refKey [16]byte // keys ref: logs name approvals without their tokens

	// unrecovered are approvals Recover found executing but could not mark
	// interrupted, by token; under mu. Each sweep tries them again.
	unrecovered map[string]record.Approval
	// unended are the ends of runs not yet recorded in full, by token;
	// under mu. Each sweep tries them again (ending.go).
	unended map[string]*ending
	// finishFailures counts failed FinishApproval calls in sweeps, Recover
	// and the ends of runs (see Stats).
	finishFailures atomic.Int64
	nudged         nudgeState // when the next nudge is due, direct conversations (nudge.go)
}

var (
	_ core.Holder         = (*Broker)(nil)
	_ core.CommandHandler = (*Broker)(nil)
	_ core.StandingAllows = (*Broker)(nil)
)

// NewBroker returns a Broker that runs approved actions and feeds outcomes
// back through d. It refuses an empty approver list: with nobody to approve,
// every held action would be a silent dead end.
func NewBroker(d core.Dispatcher, o Options) (*Broker, error) {
	if d == nil {
		return nil, errors.New("hitl: broker: nil dispatcher")
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	o.defaults()
	b := &Broker{
		d: d, o: o, log: o.Log,
		wake:      make(chan struct{}, 1),
		settled:   make(chan struct{}),
		ready:     make(chan struct{}),
		active:    make(map[int64]*run),
		followUps: make(map[core.Identity]int),
		deciding:  make(map[core.Identity]int),

		unrecovered: make(map[string]record.Approval),
		unended:     make(map[string]*ending),
	}
	if _, err := rand.Read(b.refKey[:]); err != nil {
		return nil, fmt.Errorf("hitl: broker: %w", err)
	}
	b.approvers.Store(newApproverSet(o.Approvers, o.People, b.log))
	b.nudges.Store(&o.Nudges)
	// Cancelled by Run at shutdown, after the grace period.
	b.runCtx, b.cancelRuns = context.WithCancel(context.Background())
	return b, nil
}

// approverSet is the approvers as configured and as a set, with the
// people their identities belong to.
type approverSet struct {
	list []core.Identity
	set  map[core.Identity]bool
	// person numbers the group of hitl.people each grouped identity is
	// in, from 1; an identity not in it is a person of its own.
	person map[core.Identity]int
}

// newApproverSet builds the set of list, leaving out (with a warning) any
// schedule identity, and the person of each identity of people (checked
// by validatePeople).
func newApproverSet(list []core.Identity, people [][]core.Identity, log zerolog.Logger) *approverSet {
	a := &approverSet{list: slices.Clone(list), set: make(map[core.Identity]bool, len(list)), person: make(map[core.Identity]int)}
	for i, group := range people {
		for _, id := range group {
			a.person[id] = i + 1
		}
	}
	for _, id := range list {
		if id.IsSchedule() || id.IsWebhook() {
			// A schedule acts on the configuration's authority; letting it
			// approve would let a prompt approve its own held calls.
			log.Warn().Str("identity", string(id)).Msg("hitl: a schedule is never an approver; ignoring it in hitl.approvers")
			continue
		}
		a.set[id] = true
	}
	return a
}

// samePerson reports whether x and y are identities of one person: the
// same identity, or two of one group of hitl.people.
func (a *approverSet) samePerson(x, y core.Identity) bool {
	if x == y {
		return true
	}
	p, ok := a.person[x]
	return ok && a.person[y] == p
}

// byPerson returns the approvers grouped by person, in the order each
// person's first identity is listed.
func (a *approverSet) byPerson() [][]core.Identity {
	var out [][]core.Identity
	at := make(map[int]int) // group of hitl.people → index in out
	for _, id := range a.list {
		if !a.set[id] {
			continue
		}
		p, ok := a.person[id]
		if !ok {
			out = append(out, []core.Identity{id})
			continue
		}
		if i, seen := at[p]; seen {
			out[i] = append(out[i], id)
			continue
		}
		at[p] = len(out)
		out = append(out, []core.Identity{id})
	}
	return out
}

// SetApprovers replaces the approvers and the people their identities
// belong to (a configuration reload: hitl.approvers and hitl.people):
// commands and button presses checked from now on are judged by the new
// lists; pending approvals stay and can be resolved by the new approvers.
// The lists are checked as NewBroker checks them; on error nothing
// changes.
func (b *Broker) SetApprovers(ids []core.Identity, people ...[]core.Identity) error {
	if err := validateApprovers(ids); err != nil {
		return err
	}
	if err := validatePeople(people); err != nil {
		return err
	}
	b.approvers.Store(newApproverSet(ids, people, b.log))
	return nil
}

// validatePeople refuses an identity not shaped gateway:id, an empty
// group and an identity in more than one group.
func validatePeople(people [][]core.Identity) error {
	in := make(map[core.Identity]int)
	for i, group := range people {
		if len(group) == 0 {
			return fmt.Errorf("hitl: people[%d]: an empty group; list the identities of one person", i)
		}
		for _, id := range group {
			if g, rest, ok := splitIdentity(id); !ok || g == "" || rest == "" {
				return fmt.Errorf("hitl: people[%d]: identity %q: want gateway:id, e.g. slack:U0123ABCD", i, id)
			}
			if j, dup := in[id]; dup {
				return fmt.Errorf("hitl: people[%d]: identity %q is already in people[%d]: an identity belongs to one person", i, id, j)
			}
			in[id] = i
		}
	}
	return nil
}

// validateApprovers refuses an empty list and an identity not shaped
// gateway:id.
func validateApprovers(ids []core.Identity) error {
	if len(ids) == 0 {
		return errors.New("hitl: no approvers configured (hitl.approvers): nobody could approve a held action; list at least one identity (gateway:id)")
	}
	for _, id := range ids {
		if g, rest, ok := splitIdentity(id); !ok || g == "" || rest == "" {
			return fmt.Errorf("hitl: approver %q: want gateway:id, e.g. slack:U0123ABCD", id)
		}
	}
	return nil
}

// validate checks the options a person configured.
func (o *Options) validate() error {
	if err := validateApprovers(o.Approvers); err != nil {
		return err
	}
	if err := validatePeople(o.People); err != nil {
		return err
	}
	for _, c := range o.Notify {
		if c.Gateway == "" || c.Chat == "" {
			return fmt.Errorf("hitl: notify target %q: want gateway:chat[:thread]", c.Key())
		}
	}
	if o.TTL < 0 {
		return fmt.Errorf("hitl: ttl %s: must be positive", o.TTL)
	}
	return o.Nudges.validate()
}

// defaults fills the zero options.
func (o *Options) defaults() {
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.Store == nil {
		o.Store = NewMemoryStore()
	}
	if o.Audit == nil {
		if a, ok := o.Store.(Audit); ok {
			o.Audit = a
		} else {
			o.Audit = NewMemoryStore()
		}
	}
	if o.Standing == nil {
		o.Standing = NewMemoryStanding()
	}
	o.Grants = defaultGrants(o.Grants, o.Standing)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewToken == nil {
		o.NewToken = NewToken
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = min(max(o.TTL/10, time.Second), 30*time.Second)
		if _, shared := o.Store.(SharedStore); shared && o.Instance != "" {
			// The runs of a dead instance are swept too: marked
			// interrupted within about a third of lease_ttl of its end.
			o.SweepEvery = min(o.SweepEvery, max(o.LeaseTTL/3, 100*time.Millisecond))
		}
	}
}

// splitIdentity splits "gateway:id".
func splitIdentity(id core.Identity) (gateway, rest string, ok bool) {
	g := id.Gateway()
	if len(g) == len(id) {
		return "", "", false
	}
	return g, string(id[len(g)+1:]), true
}

// Approvers returns the configured approver identities.
func (b *Broker) Approvers() []core.Identity { return slices.Clone(b.approvers.Load().list) }

// NotifyTargets returns the conversations that receive every request.
func (b *Broker) NotifyTargets() []core.Conversation { return slices.Clone(b.o.Notify) }

// TTL returns how long a request waits for a decision.
func (b *Broker) TTL() time.Duration { return b.o.TTL }

// People returns the approvers grouped by person (hitl.people): the
// identities of one person together, each person once.
func (b *Broker) People() [][]core.Identity { return b.approvers.Load().byPerson() }

// samePerson reports whether x and y are identities of one person.
func (b *Broker) samePerson(x, y core.Identity) bool { return b.approvers.Load().samePerson(x, y) }

// IsApprover reports whether id may resolve approvals.
func (b *Broker) IsApprover(id core.Identity) bool { return b.approvers.Load().set[id] }

// Pending lists the approvals still waiting for a decision (not yet past
// their expiry), oldest first.
func (b *Broker) Pending(ctx context.Context) ([]record.Approval, error) {
	all, err := b.o.Store.Approvals(ctx, record.StatusPending)
	if err != nil {
		return nil, fmt.Errorf("hitl: pending: %w", err)
	}
	now := b.o.Now()
	return slices.DeleteFunc(all, func(a record.Approval) bool { return !now.Before(a.Expires) }), nil
}

// StandingAllows lists the standing allows.
func (b *Broker) StandingAllows(ctx context.Context) ([]record.StandingAllow, error) {
	s, err := b.o.Standing.StandingAllows(ctx)
	if err != nil {
		return nil, fmt.Errorf("hitl: standing allows: %w", err)
	}
	return s, nil
}

// StandingAllowed reports whether a human approved exactly this tool with
// exactly these arguments for good, and every workspace file the arguments
// name is as it was when the allow was added. A store or file error counts
// as not allowed (the action is then held, never silently allowed) and is
// logged.
func (b *Broker) StandingAllowed(ctx context.Context, tool, args string) bool {
	if core.ApprovedOnce(tool) {
		return false // a person approves exactly the content shown, each time
	}
	s, changed, err := b.standing(ctx, llm.ToolCall{Name: tool, Args: args})
	switch {
	case errors.Is(err, record.ErrNotFound):
		return false
	case err != nil:
		b.log.Error().Err(err).Str("tool", tool).Msg("hitl: standing allow lookup failed; holding the action")
		return false
	case len(changed) > 0:
		b.log.Info().Int64("rule", s.ID).Str("tool", tool).Strs("changed", changed).
			Msg("hitl: files changed since the standing allow was added; holding the action")
		return false
	}
	return true
}

// standing returns the standing allow for exactly call and the workspace
// files that changed since it was added; record.ErrNotFound when there is none.
func (b *Broker) standing(ctx context.Context, call llm.ToolCall) (record.StandingAllow, []string, error) {
	return StandingFor(ctx, b.o.Standing, b.o.Workspace, call)
}

// StandingFor returns the standing allow in st for exactly call (tool and
// canonical arguments) and the files of workspace its arguments name that
// changed since it was added — the allow applies only when there are none;
// record.ErrNotFound when there is no allow. The broker decides with it,
// and `bot policy test` reports with it.
func StandingFor(ctx context.Context, st StandingStore, workspace string, call llm.ToolCall) (record.StandingAllow, []string, error) {
	s, err := st.StandingAllowFor(ctx, call.Name, call.Args)
	if err != nil {
		return record.StandingAllow{}, nil, err
	}
	cur, err := bindFiles(workspace, call)
	if err != nil {
		return s, nil, fmt.Errorf("hitl: standing allow #%d: %w", s.ID, err)
	}
	return s, changedFiles(s.Files, cur), nil
}

// ref names an approval in log lines without its token: an HMAC of the token
// under a key drawn at start-up, stable for the life of the process.
// Tokens never reach the logs.
func (b *Broker) ref(token string) string {
	m := hmac.New(sha256.New, b.refKey[:])
	m.Write([]byte(token))
	return hex.EncodeToString(m.Sum(nil)[:5])
}
