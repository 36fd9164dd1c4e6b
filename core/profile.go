package core

import (
	"fmt"
	"path"
	"strings"
	"sync/atomic"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// Profile is the settings of the conversations its Match globs match
// (profiles[] in the configuration): who answers, with which prompt and
// tools, under which extra rules, approvers and budget. A zero field
// leaves the Engine's own setting.
type Profile struct {
	// Name names the profile in /status, logs and `bot policy test`.
	Name string
	// Match are globs (path.Match syntax) over a conversation's key,
	// "gateway:chat[:thread]"; a glob that matches a chat also matches
	// its threads.
	Match []string
	// Provider answers the profile's turns; nil is the Engine's.
	Provider llm.Provider
	// Model names the model for /status; "" is the Engine's.
	Model string
	// SystemPrompt replaces the Engine's when not empty.
	SystemPrompt string
	// Tools are globs over tool names: the only tools offered to the
	// model, and the only ones a call may name. nil offers every tool.
	Tools []string
	// Skills are globs over skill names: the only enabled skills its
	// conversations may use. nil is every enabled skill.
	Skills []string
	// Rules are checked before the policy gate's own rules.
	Rules []Rule
	// Approvers may resolve the approvals of the profile's conversations,
	// besides hitl.approvers.
	Approvers []Identity
	// Budget replaces the Engine's for the profile's conversations; nil
	// is the Engine's.
	Budget Budget
}

// Matches reports whether conv is one of the profile's conversations. A
// glob that does not parse matches nothing (the configuration refuses it).
func (p *Profile) Matches(conv Conversation) bool {
	key, chat := conv.Key(), conv.Gateway+":"+conv.Chat
	for _, g := range p.Match {
		if ok, _ := path.Match(g, key); ok {
			return true
		}
		if conv.Thread != "" {
			if ok, _ := path.Match(g, chat); ok {
				return true
			}
		}
	}
	return false
}

// Offers reports whether the profile offers the tool named name: always
// when it lists no tools.
func (p *Profile) Offers(name string) bool {
	if p == nil || p.Tools == nil {
		return true
	}
	for _, g := range p.Tools {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// offered returns the specs of all the profile offers (all of specs when
// p is nil or lists no tools). specs is not modified.
func (p *Profile) offered(specs []llm.ToolSpec) []llm.ToolSpec {
	if p == nil || p.Tools == nil {
		return specs
	}
	out := make([]llm.ToolSpec, 0, len(specs))
	for _, s := range specs {
		if p.Offers(s.Name) {
			out = append(out, s)
		}
	}
	return out
}

// notOffered is the error for a call of a tool the profile does not
// offer: worded as the tool registry words an unknown tool, since to this
// conversation's model it is one.
func (p *Profile) notOffered(name string, specs []llm.ToolSpec) error {
	names := make([]string, 0, len(specs))
	for _, s := range p.offered(specs) {
		names = append(names, s.Name)
	}
	list := strings.Join(names, ", ")
	if list == "" {
		list = "none"
	}
	return fmt.Errorf("unknown tool %q (available: %s)", name, list)
}

// Profiles finds the profile of a conversation: the first whose Match
// does. Its list is replaced whole by Set (a configuration reload); a nil
// *Profiles has no profile.
//
// There is no cache: a lookup is a few path.Match calls over the
// conversation key, cheaper than a bounded, invalidated map would be, and
// nothing a stranger sends can grow anything.
type Profiles struct {
	list atomic.Pointer[[]*Profile]
}

// NewProfiles returns Profiles over list, tried in order.
func NewProfiles(list []Profile) *Profiles {
	ps := &Profiles{}
	ps.Set(list)
	return ps
}

// Set replaces the profiles for the conversations looked up from now on;
// a turn already running keeps the profile it started with. Safe beside
// For; list must not be changed afterwards.
func (ps *Profiles) Set(list []Profile) {
	out := make([]*Profile, len(list))
	for i := range list {
		out[i] = &list[i]
	}
	ps.list.Store(&out)
}

// For returns conv's profile, or nil when no profile matches it.
func (ps *Profiles) For(conv Conversation) *Profile {
	if ps == nil {
		return nil
	}
	l := ps.list.Load()
	if l == nil {
		return nil
	}
	for _, p := range *l {
		if p.Matches(conv) {
			return p
		}
	}
	return nil
}

// List returns the profiles in order (`bot policy explain`).
func (ps *Profiles) List() []Profile {
	if ps == nil || ps.list.Load() == nil {
		return nil
	}
	l := *ps.list.Load()
	out := make([]Profile, len(l))
	for i, p := range l {
		out[i] = *p
	}
	return out
}

// Any reports whether there is any profile.
func (ps *Profiles) Any() bool {
	if ps == nil {
		return false
	}
	l := ps.list.Load()
	return l != nil && len(*l) > 0
}

// Approvers returns the approvers conv's profile adds, or nil.
func (ps *Profiles) Approvers(conv Conversation) []Identity {
	if p := ps.For(conv); p != nil {
		return p.Approvers
	}
	return nil
}
