package core

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// Config configures an Engine. Provider, Tools and Auth are required.
type Config struct {
	Provider llm.Provider
	Tools    ToolCatalog
	// Gates run in order on every action the LLM proposes.
	Gates []Gate
	Auth  *Auth
	// History defaults to an in-memory history of 40 messages a conversation.
	History History
	Usage   UsageRecorder // optional
	// Budget caps usage per UTC day, checked at the start of every turn;
	// nil is unlimited. BudgetNotify are told once a day per reached cap.
	Budget       Budget
	BudgetNotify []Conversation
	// Holder takes actions that need approval; without one they are
	// refused. A RunCanceller Holder has its running actions stopped by /cancel.
	Holder Holder
	// Commands sees authorised messages before the queue and the LLM (the
	// hitl broker); it may also be a CommandLister and a StatusReporter.
	Commands CommandHandler
	// Undo answers /undo and /checkpoints and notes in approval requests
	// that a call will have no checkpoint; without it the commands are
	// unknown.
	Undo Undoer
	// Attachments takes in the files of authorised messages; without it a
	// file is answered "not set up" and its caption handled as text.
	Attachments AttachmentReceiver
	// Profiles give conversations that match one their own provider,
	// system prompt, tools, rules and budget; optional. The PolicyGate
	// among Gates should have the same Profiles, for the rules.
	Profiles *Profiles
	// Journal, on a store shared by several instances, takes the
	// messages of people on the allow list durably before they are
	// acknowledged; their turns then come back through RunJournaled, on
	// whichever instance claims them. Nil keeps every message in memory.
	Journal Journal
	// Schedules lists the configured schedules for /schedules; optional.
	Schedules ScheduleLister
	// Status add their lines to /status (the MCP servers' states, say);
	// optional. Like every reply, the answer is redacted.
	Status []StatusReporter
	// Actuators is the registry the Engine dispatches through; nil makes
	// a new one. Given, it can be shared with what is built before the
	// Engine (the send_file tool finds its gateway there).
	Actuators *Actuators
	// Skills lists the skills a conversation may use in its system
	// prompt (and may answer /skills and /skill); optional.
	Skills SkillLister
	// ToolAudit records tool calls run on a rule's allow; optional.
	ToolAudit ToolAudit
	// Redact removes secrets from text the LLM is about to see and from
	// replies; nil leaves text as it is.
	Redact func(string) string

	SystemPrompt string
	// TypingDelay is how long the model may take to answer before the
	// turn shows "typing…"; default TypingDelay.
	TypingDelay time.Duration
	// Model names the model for /status; empty uses Provider.Name().
	Model        string
	MaxSteps     int           // tool steps in one turn; default 10
	MaxToolCalls int           // tool calls run or held from one LLM response; default 16
	MaxMessage   int           // longest chat message accepted, in bytes; default 16 KiB
	Concurrency  int           // conversations processed at once; default 8
	QueueSize    int           // signals waiting per conversation; default 64
	Grace        time.Duration // how long Run lets in-flight turns finish at stop; default 10s
	Log          zerolog.Logger
	Now          func() time.Time
	// Metrics records messages, replies and tool calls; nil records
	// nothing. LLM requests are recorded per provider, by wrapping each
	// in llm.Observed where the Provider is built.
	Metrics *metrics.Registry
}

// Defaults of Config.MaxToolCalls and Config.MaxMessage.
const (
	DefaultMaxToolCalls = 16
	DefaultMaxMessage   = 16 << 10
)

// DefaultSystemPrompt is the built-in system prompt. It is kept short on
// purpose: every byte is sent with every request. What to do with a call
// held for approval is said by the held call's result itself (hitl), where
// a profile's own system prompt cannot leave it out.
const DefaultSystemPrompt = "You are gatehouse, an assistant in a team chat. Be brief."

// Engine runs Perceive → Reason → Act on every signal: each conversation's
// signals strictly in order, different conversations concurrently.
type Engine struct {
	cfg       Config
	actuators *Actuators
	queues    *queues
	slots     slots
	log       zerolog.Logger
	counters  counters
	turns     runningTurns
	notices   budgetNotices

	runMu     sync.Mutex
	running   bool
	started   chan struct{}
	startedAt time.Time
	work      context.Context // turns run under it; cancelled after the grace period
}

var _ Dispatcher = (*Engine)(nil)

// NewEngine checks cfg, fills in defaults and returns an Engine ready to Run.
func NewEngine(cfg Config) (*Engine, error) {
	if cfg.Provider == nil || cfg.Tools == nil || cfg.Auth == nil {
		return nil, errors.New("core: engine needs a provider, a tool catalog and auth")
	}
	if cfg.History == nil {
		cfg.History = NewMemoryHistory(40)
	}
	if cfg.SystemPrompt == "" {
		cfg.SystemPrompt = DefaultSystemPrompt
	}
	setDefault(&cfg.MaxSteps, 10)
	setDefault(&cfg.MaxToolCalls, DefaultMaxToolCalls)
	setDefault(&cfg.MaxMessage, DefaultMaxMessage)
	setDefault(&cfg.Concurrency, 8)
	setDefault(&cfg.QueueSize, 64)
	if cfg.TypingDelay <= 0 {
		cfg.TypingDelay = TypingDelay
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Redact == nil {
		cfg.Redact = func(s string) string { return s }
	}
	if cfg.Actuators == nil {
		cfg.Actuators = &Actuators{}
	}
	return &Engine{
		cfg:       cfg,
		actuators: cfg.Actuators,
		queues:    newQueues(cfg.QueueSize),
		slots:     slots{max: cfg.Concurrency},
		log:       cfg.Log,
		started:   make(chan struct{}),
	}, nil
}

func setDefault(v *int, def int) {
	if *v <= 0 {
		*v = def
	}
}

// Register makes a the actuator for name: a gateway under its own name, the
// tool runner under ToolActuator.
func (e *Engine) Register(name string, a Actuator) error {
	return e.actuators.Register(name, a)
}

// Run processes signals until ctx ends. It then stops accepting input and
// lets in-flight and queued signals finish for the grace period. After it,
// turns still running are cancelled and signals still queued are dropped
// (logged; their Done is not called, so a gateway that acknowledges in Done
// gets them again after a restart); Run returns once nothing is in flight.
func (e *Engine) Run(ctx context.Context) error {
	e.runMu.Lock()
	if e.running {
		e.runMu.Unlock()
		return errors.New("core: engine already running")
	}
	work, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	e.running, e.work, e.startedAt = true, work, e.cfg.Now()
	close(e.started)
	e.runMu.Unlock()

	<-ctx.Done()
	e.queues.close()
	grace, stop := context.WithTimeout(context.Background(), e.cfg.Grace)
	defer stop()
	if e.queues.waitIdle(grace) != nil {
		e.log.Warn().Dur("grace", e.cfg.Grace).Msg("cancelling turns still running at shutdown")
		cancel()
		e.queues.waitIdle(context.Background()) //nolint:errcheck // never times out
	}
	return nil
}

// Submit queues s into its conversation. It waits while that conversation's
// queue is full (input is delayed, never dropped) and fails only when ctx
// ends or the engine has stopped.
//
// A message from an authorised sender that is a chat command, or is over
// Config.MaxMessage, is answered at once, before the queue and without a
// concurrency slot, so /approve, /pending or /cancel never wait behind a
// slow turn; its Done is called before Submit returns. /whoami is answered
// so for anyone, before the allow list.
//
// With a Config.Journal, any other message from an authorised sender is
// put there instead of the queue, and Done is called once it is: its turn
// comes back through RunJournaled on whichever instance claims it. An
// error wrapping ErrUnavailable means the journal could not take it.
func (e *Engine) Submit(ctx context.Context, s Signal) error {
	select {
	case <-e.started:
	case <-ctx.Done():
		return ctx.Err()
	}
	if s.At.IsZero() {
		s.At = e.cfg.Now()
	}
	key := s.Conv.Key()
	if s.Kind == KindMessage {
		e.cfg.Metrics.MessageReceived(s.Conv.Gateway)
	}
	if handled, err := e.whoami(s); handled || err != nil {
		if err != nil {
			return fmt.Errorf("core: submit to %s: %w", key, err)
		}
		return nil
	}
	if s.Kind == KindMessage && e.cfg.Auth.Allowed(s) {
		handled, err := e.fastPath(s)
		if err != nil {
			return fmt.Errorf("core: submit to %s: %w", key, err)
		}
		if handled {
			return nil
		}
	} else if s.Kind == KindMessage {
		// Refused by the allow list: an escalation approver's command
		// about their request is still answered; the rest is a
		// stranger's message.
		handled, err := e.guestPath(s)
		if err != nil {
			return fmt.Errorf("core: submit to %s: %w", key, err)
		}
		if handled {
			return nil
		}
	}
	if e.journalTakes(s) {
		took, err := e.cfg.Journal.Put(ctx, s)
		if err != nil {
			return fmt.Errorf("core: submit to %s: %w", key, err)
		}
		if took { // durably written: the gateway may acknowledge it
			e.done(s)
			return nil
		}
	}
	start, err := e.queues.push(ctx, key, s)
	if err != nil {
		return fmt.Errorf("core: submit to %s: %w", key, err)
	}
	if start {
		e.ready(key)
	}
	return nil
}

// WaitIdle blocks until every submitted signal has been processed (or ctx
// ends). A gateway on piped input uses it to exit once everything is answered.
func (e *Engine) WaitIdle(ctx context.Context) error {
	return e.queues.waitIdle(ctx)
}

// done calls s.Done, if set. Done is the gateway's code (it acknowledges
// the message on the platform): a panic in it is logged, like one in Act,
// and never takes the process down.
func (e *Engine) done(s Signal) {
	if s.Done == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			e.log.Error().Interface("panic", r).Bytes("stack", debug.Stack()).Str("actuator", s.Conv.Gateway).
				Str("conv", s.Conv.Key()).Msg("signal's Done panicked")
		}
	}()
	s.Done()
}

// process runs one signal in a concurrency slot (see slots). It reports
// false, without running anything, when shutdown has cut the work before
// the signal got its turn (which may take the whole grace).
// A turn cut mid-way by the cancellation counts as processed: its tools may
// have run, and running it again after a restart could repeat them.
func (e *Engine) process(s Signal) bool {
	if e.work.Err() != nil {
		return false
	}
	ctx, rt, end := e.turns.start(e.work, s.Conv.Key())
	defer end()
	e.handle(ctx, rt, s)
	return true
}

// Act dispatches a by actuator name without gates: replies to the gateway of
// a.Conv (secrets redacted), tool calls to the tool runner. It implements
// Dispatcher for the hitl broker; the Engine's own turns use it too.
func (e *Engine) Act(ctx context.Context, a Action) (res Result, err error) {
	name := a.Conv.Gateway
	if a.Kind == ActionTool {
		name = ToolActuator
	} else {
		a.Text = e.cfg.Redact(a.Text)
	}
	act, ok := e.actuators.Get(name)
	if !ok {
		return Result{}, fmt.Errorf("core: no actuator %q for %s", name, a.Conv.Key())
	}
	defer func() {
		if r := recover(); r != nil {
			e.log.Error().Interface("panic", r).Bytes("stack", debug.Stack()).Str("actuator", name).
				Str("conv", a.Conv.Key()).Msg("actuator panicked")
			res, err = Result{}, fmt.Errorf("core: %s %s panicked: %v", name, a.Kind, r)
		}
	}()
	res, err = act.Act(ctx, a)
	if err != nil {
		return res, fmt.Errorf("core: %s %s: %w", name, a.Kind, err)
	}
	return res, nil
}

// UseHITL sets the approval broker after construction, because the broker
// needs the Engine as its Dispatcher. Call it before Run.
func (e *Engine) UseHITL(h Holder, c CommandHandler) {
	e.cfg.Holder, e.cfg.Commands = h, c
}

// Rejudge decides a tool call through the gates as a turn does, now: a
// rule reloaded since the call was held, or another instance's policy,
// judges it by the rules in force here. The hitl broker asks it before
// it runs an approved call (hitl.Options.Policy) and refuses the run on
// Deny; NeedsApproval is what a human has just given.
func (e *Engine) Rejudge(ctx context.Context, a Action) Decision {
	return CheckGates(ctx, e.cfg.Gates, a)
}
