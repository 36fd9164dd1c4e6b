package core

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// Budget caps the model's usage per UTC day. The Engine consults it at
// the start of every turn: a conversation over a cap gets no turn (the
// model is not called) until the next 00:00 UTC. Chat commands never reach
// the model and are not checked.
type Budget interface {
	// Exceeded returns the first cap conv has reached on the UTC day that
	// contains now; ok is false when a turn may start.
	Exceeded(ctx context.Context, conv string, now time.Time) (c BudgetCap, ok bool, err error)
	// StatusLines describe today's usage against the caps, for /status.
	StatusLines(ctx context.Context, conv string, now time.Time) ([]string, error)
}

// BudgetCap is a reached cap, described for the people told about it.
type BudgetCap struct {
	// Key is the cap's configuration key, "budget.daily_tokens".
	Key string
	// What names the cap in words: "the daily token budget of all conversations".
	What string
	// Limit and Used are the cap's size and today's usage in its unit:
	// "50000 tokens", "$2.50".
	Limit, Used string
	// PerConversation marks a cap counted per conversation: the notify
	// conversations hear of it once a day for each conversation that
	// reaches it, not once a day in all.
	PerConversation bool
}

// budgetNotices remembers, for the current UTC day only, which reached caps
// the notify conversations were told about. It lives in memory: after a
// restart they are told once more.
type budgetNotices struct {
	mu   sync.Mutex
	day  string
	told map[string]bool
}

// first reports whether key is new on day, and records it.
func (n *budgetNotices) first(day, key string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.day != day {
		n.day, n.told = day, map[string]bool{}
	}
	if n.told[key] {
		return false
	}
	n.told[key] = true
	return true
}

// budgetReached returns the cap of Config.Budget that s's conversation has
// reached, if any. A budget that cannot be read lets the turn start
// (logged): a broken store must not silence the bot.
func (e *Engine) budgetReached(ctx context.Context, log zerolog.Logger, s Signal) (BudgetCap, bool) {
	b := e.budgetFor(s.Conv)
	if b == nil {
		return BudgetCap{}, false
	}
	c, over, err := b.Exceeded(ctx, s.Conv.Key(), e.cfg.Now())
	if err != nil {
		log.Error().Err(err).Msg("budget not checked; the turn starts")
		return BudgetCap{}, false
	}
	return c, over
}

// refuseOverBudget tells the user of s that cap c refuses the turn, and
// the Config.BudgetNotify conversations once a day per cap (for a
// PerConversation cap, once a day per conversation).
func (e *Engine) refuseOverBudget(ctx context.Context, log zerolog.Logger, s Signal, c BudgetCap) {
	now := e.cfg.Now()
	key := s.Conv.Key()
	in := fmtWait(nextUTCMidnight(now).Sub(now).Truncate(time.Minute))
	log.Warn().Str("cap", c.Key).Str("limit", c.Limit).Str("used", c.Used).Msg("budget reached: turn refused")
	notice := c.Key
	if c.PerConversation {
		notice += " " + key
	}
	// The notices go first: once the user has the answer, whatever this
	// refusal does is done.
	if e.notices.first(now.UTC().Format(time.DateOnly), notice) {
		text := fmt.Sprintf("Budget reached: %s (%s = %s; used today: %s). Turns are refused until 00:00 UTC (in %s). "+
			"First refused in %s.", c.What, c.Key, c.Limit, c.Used, in, textutil.Graphic(key))
		for _, conv := range e.cfg.BudgetNotify {
			if _, err := e.Act(ctx, Action{Kind: ActionReply, Conv: conv, Text: text}); err != nil {
				log.Error().Err(err).Str("notify", conv.Key()).Msg("budget notice not delivered")
			}
		}
	}
	e.tell(ctx, log, s, fmt.Sprintf("I can't start on this: %s is used up (%s = %s; used today: %s). "+
		"It resets at 00:00 UTC (in %s). Commands such as /status still work.",
		c.What, c.Key, c.Limit, c.Used, in))
}

// budgetFor is the budget of conv: its profile's, else Config.Budget;
// nil is unlimited.
func (e *Engine) budgetFor(conv Conversation) Budget {
	if p := e.cfg.Profiles.For(conv); p != nil && p.Budget != nil {
		return p.Budget
	}
	return e.cfg.Budget
}

// nextUTCMidnight is the 00:00 UTC that follows t.
func nextUTCMidnight(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}

// fmtWait writes a wait of whole minutes as "3h25m" or "12m".
func fmtWait(d time.Duration) string {
	s := d.String()
	s = strings.TrimSuffix(s, "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	if s == "" {
		return "less than a minute"
	}
	return s
}

// budgetStatus returns /status's usage lines.
func (e *Engine) budgetStatus(ctx context.Context, log zerolog.Logger, conv Conversation) []string {
	b := e.budgetFor(conv)
	if b == nil {
		return nil
	}
	lines, err := b.StatusLines(ctx, conv.Key(), e.cfg.Now())
	if err != nil {
		log.Error().Err(err).Msg("usage for /status")
		return []string{"Usage today: could not be read (the bot's log has the details)"}
	}
	return lines
}
