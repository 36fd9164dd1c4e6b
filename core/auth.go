package core

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// authLists are the allow lists and approvers an Auth decides by.
type authLists struct {
	allow     map[string]map[string]bool // gateway → entries
	approvers map[Identity]bool
}

func newAuthLists(allow map[string][]string, approvers []Identity) *authLists {
	l := &authLists{
		allow:     make(map[string]map[string]bool, len(allow)),
		approvers: make(map[Identity]bool, len(approvers)),
	}
	for gw, entries := range allow {
		set := make(map[string]bool, len(entries))
		for _, e := range entries {
			set[strings.TrimSpace(e)] = true
		}
		l.allow[gw] = set
	}
	for _, id := range approvers {
		l.approvers[id] = !id.IsSchedule() && !id.IsWebhook()
	}
	return l
}

// Auth decides who may talk to the bot: per gateway an allow list, plus the
// approvers, who may always talk. Closed by default: an empty list admits
// only the approvers; "*" opens a gateway explicitly.
//
// An allow entry matches a sender identity ("<gateway>:123"), a conversation
// key ("<gateway>:-1001234"), or, as a convenience, the bare id after the
// gateway prefix ("123" in gateways.<gateway>.allow).
type Auth struct {
	lists   atomic.Pointer[authLists]   // replaced whole by Set
	pairing atomic.Pointer[authPairing] // set by SetPairing; nil: no pairing

	mu       sync.Mutex
	told     map[Identity]time.Time // unknown senders last told, for rate limiting
	whoTold  map[Identity]time.Time // unknown senders last answered /whoami
	tellGap  time.Duration
	tellKeep int
	tokens   float64   // strangers' replies that may be sent now
	filled   time.Time // when tokens was last brought up to date
	checked  time.Time // when the store was last asked for a told stranger (mayCheck)
}

// The bound on the replies strangers get, all together (the allow list's
// refusal, a pairing code, /whoami): each is a message the bot sends to
// the platform, whose rate limits the allowed users' replies share, so
// however many strangers write, at most StrangerBurst replies go at once
// and StrangerRate a second on average. A stranger not answered for it is
// answered when they write again later.
const (
	StrangerBurst = 20
	StrangerRate  = 2
)

// NewAuth returns an Auth over per-gateway allow lists and the approvers.
func NewAuth(allow map[string][]string, approvers []Identity) *Auth {
	a := &Auth{
		told:     make(map[Identity]time.Time),
		whoTold:  make(map[Identity]time.Time),
		tellGap:  10 * time.Minute,
		tellKeep: 1000,
		tokens:   StrangerBurst,
	}
	a.Set(allow, approvers)
	return a
}

// Set replaces the allow lists and the approvers for the signals checked
// from now on (a configuration reload). Safe beside Allowed.
func (a *Auth) Set(allow map[string][]string, approvers []Identity) {
	a.lists.Store(newAuthLists(allow, approvers))
}

// Allowed reports whether the sender of s may talk to the bot.
func (a *Auth) Allowed(s Signal) bool {
	if s.From == "" {
		return false
	}
	if s.From.IsSchedule() || s.Schedule != "" {
		return scheduled(s) // only the scheduler's own signals, never an approver entry
	}
	if s.From.IsWebhook() || s.Webhook != "" {
		return fromWebhook(s) // only the webhooks server's own signals
	}
	l := a.lists.Load()
	if l.approvers[s.From] {
		return true
	}
	c := s.Conv
	set := l.allow[c.Gateway]
	if set["*"] || set[string(s.From)] || set[c.Key()] || set[c.Gateway+":"+c.Chat] {
		return true // a chat allowed as a whole includes its threads
	}
	_, user, _ := strings.Cut(string(s.From), ":")
	return set[user] || set[c.Chat] || a.paired(s)
}

// IsApprover reports whether id is one of the approvers (never a schedule).
func (a *Auth) IsApprover(id Identity) bool { return a.lists.Load().approvers[id] }

// Refusal returns the one short reply an unknown sender gets, or "" when that
// sender was already told recently (so strangers cannot make the bot spam).
func (a *Auth) Refusal(s Signal, now time.Time) string {
	if !a.mayTell(a.told, a.tellGap, s.From, now) {
		return ""
	}
	return fmt.Sprintf("Sorry, I only talk to people on my allow list. Your identity is %s — ask the bot's owner to add it to gateways.%s.allow.", s.From, s.Conv.Gateway)
}

// mayTell reports whether the unknown sender id may be answered now,
// noting it in told when so: at most once per gap, within the bound all
// strangers' replies share (StrangerBurst, StrangerRate), and, under a
// flood of more than tellKeep senders within gap, not at all.
func (a *Auth) mayTell(told map[Identity]time.Time, gap time.Duration, id Identity, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if last, ok := told[id]; ok && now.Sub(last) < gap {
		return false
	}
	if !a.filled.IsZero() && now.After(a.filled) {
		a.tokens = min(StrangerBurst, a.tokens+now.Sub(a.filled).Seconds()*StrangerRate)
	}
	if a.filled.IsZero() || now.After(a.filled) {
		a.filled = now
	}
	if a.tokens < 1 {
		return false // not noted: answered when they write again later
	}
	if len(told) >= a.tellKeep {
		for k, t := range told {
			if now.Sub(t) >= gap {
				delete(told, k)
			}
		}
		if len(told) >= a.tellKeep {
			return false // under a flood, stay silent rather than grow without bound
		}
	}
	told[id] = now
	a.tokens--
	return true
}
