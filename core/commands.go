package core

import (
	"context"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
	"time"
	"unicode"

	"github.com/rs/zerolog"
)

// commandWord matches a first word that is a chat command: a slash, letters
// only, and optionally "@botname" as some platforms send in groups. "/tmp/x"
// is not one.
var commandWord = regexp.MustCompile(`^/([A-Za-z]+)(?:@[A-Za-z0-9_]+)?$`)

// coreCommands are the chat commands the Engine answers itself.
var coreCommands = []CommandHelp{
	{Name: "help", Summary: "list the commands"},
	{Name: "start", Summary: "the same list, as a greeting"},
	{Name: "status", Summary: "model, gateways, this conversation's pending approvals, history size, today's usage, uptime"},
	{Name: "reset", Summary: "forget this conversation's history and stop its turn in progress (pending approvals stay)"},
	{Name: "cancel", Summary: "stop this conversation's turn in progress and its running tool calls"},
	{Name: "schedules", Summary: "the configured schedules and their next run"},
	{Name: "tools", Summary: "the tools offered, where each comes from and what the policy decides for it"},
	whoamiCommand,
}

// maxCommandDistance is how far a mistyped command may be from a known
// one to be answered with the right spelling.
const maxCommandDistance = 2

// fastPath handles an authorised message before the conversation's queue
// and the concurrency slot: an oversized message, a chat command of the
// core's or of the CommandHandler's, an unknown or mistyped command. It
// reports whether s was handled (its Done then called); anything else goes
// to the queue.
func (e *Engine) fastPath(s Signal) (handled bool, err error) {
	if err := e.queues.begin(); err != nil {
		return false, err
	}
	defer e.queues.finish()
	ctx := e.work
	log := e.log.With().Str("conv", s.Conv.Key()).Logger()
	defer func() {
		if r := recover(); r != nil {
			log.Error().Interface("panic", r).Bytes("stack", debug.Stack()).Msg("command panicked")
			e.tell(ctx, log, s, "Sorry, something went wrong on my side (internal error). Please try again.")
			handled = true
		}
		if handled {
			e.done(s)
		}
	}()
	if len(s.Text) > e.cfg.MaxMessage {
		e.counters.signals.Add(1)
		log.Warn().Int("bytes", len(s.Text)).Int("max", e.cfg.MaxMessage).Msg("message over engine.max_message refused")
		e.tell(ctx, log, s, fmt.Sprintf("Your message is %d bytes; the limit is %d bytes (engine.max_message). It was not stored or sent to the model.",
			len(s.Text), e.cfg.MaxMessage))
		return true, nil
	}
	name := commandName(s.Text)
	if e.coreCommand(ctx, log, s, name) {
		return true, nil
	}
	if e.cfg.Commands != nil && e.cfg.Commands.HandleCommand(ctx, s) {
		e.counters.signals.Add(1)
		log.Info().Msg("command handled")
		return true, nil
	}
	if name == "" {
		return false, nil
	}
	e.counters.signals.Add(1)
	log.Info().Str("command", name).Msg("unknown command")
	e.tell(ctx, log, s, e.unknownCommand(name))
	return true, nil
}

// commandName returns the command a message's first word names, in lower
// case, or "" when the first word is not a slash and letters.
func commandName(text string) string {
	word, _ := firstWord(text)
	if m := commandWord.FindStringSubmatch(word); m != nil {
		return strings.ToLower(m[1])
	}
	return ""
}

// firstWord splits text into its first word and the rest, both trimmed. A
// word ends at any space — a tab, a line break, a no-break space — as the
// approval commands' words do.
func firstWord(text string) (word, rest string) {
	text = strings.TrimSpace(text)
	i := strings.IndexFunc(text, unicode.IsSpace)
	if i < 0 {
		return text, ""
	}
	return text[:i], strings.TrimSpace(text[i:])
}

// coreCommand answers one of the core's own commands.
func (e *Engine) coreCommand(ctx context.Context, log zerolog.Logger, s Signal, name string) bool {
	var reply string
	switch name {
	case "help":
		reply = e.helpText()
	case "start":
		reply = "Hello! I am gatehouse: ask me anything, and I use tools when they help; risky actions wait for an approver.\n\n" + e.helpText()
	case "status":
		reply = e.statusText(ctx, log, s.Conv)
	case "reset":
		reply = e.reset(ctx, log, s.Conv)
	case "cancel":
		reply = e.cancel(s.Conv)
	case "schedules":
		reply = e.schedulesText()
	case "tools":
		reply = e.toolsText(s.Conv)
	case "pair", "pairs", "unpair":
		p, _ := e.cfg.Auth.pairer()
		if p == nil {
			return false
		}
		reply = e.pairCommand(ctx, log, s, p, name)
	case "skills", "skill":
		var ok bool
		if reply, ok = e.skillCommand(ctx, s, name); !ok {
			return false
		}
	case "undo", "checkpoints":
		if e.cfg.Undo == nil {
			return false
		}
		e.counters.signals.Add(1)
		log.Info().Str("command", name).Msg("command")
		a := Action{Kind: ActionReply, Conv: s.Conv, From: s.From, ReplyTo: s.MessageID, Escaped: true}
		if name == "undo" {
			a.Text, a.Escaped = e.undo(ctx, log, s)
		} else {
			a.Text = e.cfg.Undo.CheckpointsText(ctx, s.Conv)
		}
		if _, err := e.Act(ctx, a); err != nil {
			log.Error().Err(err).Msg("reply not delivered")
		}
		return true
	default:
		return false
	}
	e.counters.signals.Add(1)
	log.Info().Str("command", name).Msg("command")
	e.tell(ctx, log, s, reply)
	return true
}

// commands lists the core's commands and then the CommandHandler's.
func (e *Engine) commands() []CommandHelp {
	out := append([]CommandHelp(nil), coreCommands...)
	if e.cfg.Undo != nil {
		out = append(out, undoCommands...)
	}
	if _, on := e.cfg.Auth.pairer(); on {
		out = append(out, pairCommands...)
	}
	if _, on := e.cfg.Skills.(SkillCommander); on {
		out = append(out, skillCommands...)
	}
	if l, ok := e.cfg.Commands.(CommandLister); ok {
		out = append(out, l.Commands()...)
	}
	return out
}

// helpText lists every command, one line each.
func (e *Engine) helpText() string {
	lines := []string{"Commands:"}
	for _, c := range e.commands() {
		usage := "/" + c.Name
		if c.Args != "" {
			usage += " " + c.Args
		}
		lines = append(lines, usage+" — "+c.Summary)
	}
	return strings.Join(append(lines, "Anything else goes to the assistant."), "\n")
}

// unknownCommand answers a slash word that is no command: with the right
// spelling when it is a near miss of one.
func (e *Engine) unknownCommand(name string) string {
	best, bestDist := "", maxCommandDistance+1
	for _, c := range e.commands() {
		if d := editDistance(name, c.Name); d < bestDist {
			best, bestDist = c.Name, d
		}
	}
	if best != "" {
		return fmt.Sprintf("unknown command /%s — did you mean /%s? /help lists them", name, best)
	}
	return fmt.Sprintf("unknown command /%s — /help lists them", name)
}

// statusText answers /status.
func (e *Engine) statusText(ctx context.Context, log zerolog.Logger, conv Conversation) string {
	model := e.cfg.Model
	if model == "" {
		model = e.cfg.Provider.Name()
	}
	var gateways []string
	for _, n := range e.actuators.Names() {
		if n != ToolActuator {
			gateways = append(gateways, n)
		}
	}
	lines := []string{"Model: " + model}
	if p := e.cfg.Profiles.For(conv); p != nil {
		if p.Model != "" {
			lines[0] = "Model: " + p.Model
		}
		lines = append(lines, "Profile: "+p.Name)
		if len(p.Approvers) > 0 {
			ids := make([]string, len(p.Approvers))
			for i, id := range p.Approvers {
				ids[i] = string(id)
			}
			lines = append(lines, "Profile approvers (this profile's requests): "+strings.Join(ids, ", "))
		}
	} else if e.cfg.Profiles.Any() {
		lines = append(lines, "Profile: none (the top-level settings)")
	}
	lines = append(lines, "Gateways: "+strings.Join(gateways, ", "))
	if r, ok := e.cfg.Commands.(StatusReporter); ok {
		lines = append(lines, r.StatusLines(ctx, conv)...)
	}
	for _, r := range e.cfg.Status {
		lines = append(lines, r.StatusLines(ctx, conv)...)
	}
	hist, err := e.cfg.History.Load(ctx, conv.Key())
	if err != nil {
		log.Error().Err(err).Msg("history load for /status")
		lines = append(lines, "History: could not be read (the bot's log has the details)")
	} else {
		unit := "messages"
		if len(hist) == 1 {
			unit = "message"
		}
		lines = append(lines, fmt.Sprintf("History: %d %s in this conversation", len(hist), unit))
	}
	lines = append(lines, e.budgetStatus(ctx, log, conv)...)
	if e.turns.busy(conv.Key()) {
		lines = append(lines, "Turn: one is in progress (/cancel stops it)")
	}
	return strings.Join(append(lines, "Uptime: "+e.uptime().String()), "\n")
}

func (e *Engine) uptime() time.Duration {
	e.runMu.Lock()
	start := e.startedAt
	e.runMu.Unlock()
	return e.cfg.Now().Sub(start).Round(time.Second)
}

// reset answers /reset: the conversation's history goes, and its turn in
// progress is stopped with nothing of it stored afterwards; pending
// approvals, and approved actions running, stay.
func (e *Engine) reset(ctx context.Context, log zerolog.Logger, conv Conversation) string {
	reset := func() error { return e.cfg.History.Reset(ctx, conv.Key()) }
	elsewhere := false // the turn ran on another instance, asked to stop
	if jr, ok := e.cfg.Journal.(JournalResetter); ok {
		// On a shared store the turn may run on another instance: it is
		// asked to stop, keeping nothing, with the history forgotten.
		reset = func() error {
			shared, stopped, err := jr.ResetShared(ctx, conv)
			elsewhere = stopped
			if err != nil || shared {
				return err
			}
			return e.cfg.History.Reset(ctx, conv.Key())
		}
	}
	stopped, err := e.turns.forget(conv.Key(), reset)
	stopped = stopped || elsewhere
	if err != nil {
		log.Error().Err(err).Msg("history reset")
		return "Could not forget this conversation's history (the bot's log has the details)."
	}
	if stopped {
		return "Done: I forgot this conversation's history and stopped the turn in progress (nothing of it is kept). Pending approvals stay (/pending lists them)."
	}
	return "Done: I forgot this conversation's history. Pending approvals stay (/pending lists them)."
}

// cancel answers /cancel: it stops conv's turn in progress (the turn tells
// the model in a history note) and its running approved actions.
func (e *Engine) cancel(conv Conversation) string {
	turn := e.turns.cancel(conv.Key())
	elsewhere := false
	if jc, ok := e.cfg.Journal.(JournalCanceller); ok && !turn {
		var err error
		if elsewhere, err = jc.CancelElsewhere(e.work, conv); err != nil {
			e.log.Error().Err(err).Str("conv", conv.Key()).Msg("cancel: the instance running the turn could not be asked")
		}
	}
	runs := 0
	if rc, ok := e.cfg.Holder.(RunCanceller); ok {
		runs = rc.CancelRuns(conv)
	}
	var parts []string
	if turn {
		parts = append(parts, "the turn in progress and its running tool calls")
	}
	if elsewhere {
		parts = append(parts, "the turn in progress on another instance and its running tool calls")
	}
	if runs > 0 {
		parts = append(parts, fmt.Sprintf("%d running approved action(s)", runs))
	}
	if len(parts) == 0 {
		return "Nothing to cancel: no turn or approved action is running in this conversation."
	}
	return "Cancelled " + strings.Join(parts, " and ") + "."
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours (the
// commonest typo, "/stauts") cost one each.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
