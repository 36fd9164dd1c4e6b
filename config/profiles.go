package config

import (
	"fmt"
	"path"
	"strings"

	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// Profile is one entry of profiles: the settings of the conversations
// whose key one of Match matches. What it leaves empty is the top-level
// setting; a conversation no profile matches has the top-level settings
// only.
type Profile struct {
	// Name is letters, digits, '-' and '_', at most 32; unique.
	Name string `yaml:"name"`
	// Match are globs (path.Match: *, ?, [...]) over conversation keys,
	// "gateway:chat[:thread]"; a glob that matches a chat matches its
	// threads too. At least one.
	Match []string `yaml:"match"`
	// Providers name llm.providers entries, tried in this order; empty
	// is all of them, in their order.
	Providers []string `yaml:"providers"`
	// Model replaces the model of those providers for this profile.
	Model string `yaml:"model"`
	// SystemPrompt replaces llm.system_prompt when not empty.
	SystemPrompt string `yaml:"system_prompt"`
	// Tools are globs over tool names: the only tools offered to the
	// model (a call of any other is refused as an unknown tool). Absent
	// offers every tool; an empty list offers none.
	Tools []string `yaml:"tools"`
	// Skills are globs over skill names: the only enabled skills offered
	// in its conversations. Absent offers every enabled skill; an empty
	// list offers none.
	Skills []string `yaml:"skills"`
	// Policy's rules are checked before the top-level policy.rules.
	Policy Policy `yaml:"policy"`
	// Approvers are added to hitl.approvers for the approvals this
	// profile's conversations ask for.
	Approvers []string `yaml:"approvers"`
	// Budget caps each of the profile's conversations.
	Budget ProfileBudget `yaml:"budget"`
}

// ProfileBudget is a profile's daily cap on each of its conversations'
// tokens; 0 leaves budget.conversation_daily_tokens. The caps over all
// conversations (budget.daily_tokens, budget.daily_usd) are the bot's and
// apply to every profile.
type ProfileBudget struct {
	ConversationDailyTokens int `yaml:"conversation_daily_tokens"`
}

// ProviderNames returns the llm.providers the profile uses, by name, in
// order: its Providers, or every provider of providers.
func (p Profile) ProviderNames(providers []Provider) []string {
	if len(p.Providers) > 0 {
		return p.Providers
	}
	names := make([]string, len(providers))
	for i, pr := range providers {
		names[i] = pr.Name
	}
	return names
}

// profileName reports whether name may name a profile.
func profileName(name string) bool { return textutil.Shape(name, 1, 32, textutil.Alnum+"-_") }

// checkProfiles checks profiles against the gateway names and providers.
func checkProfiles(ch *checker, profiles []Profile, providers []Provider) {
	names := map[string]int{}
	known := map[string]bool{}
	for _, p := range providers {
		known[p.Name] = true
	}
	for i := range profiles {
		p := &profiles[i]
		key := fmt.Sprintf("profiles[%d]", i)
		if !profileName(p.Name) {
			ch.fail(key+".name", "want letters, digits, '-' and '_', 1 to 32 of them, got %s", quote(p.Name))
		}
		if first, dup := names[p.Name]; dup {
			ch.fail(key+".name", "duplicate profile name %s (also profiles[%d])", quote(p.Name), first)
		}
		names[p.Name] = i
		if len(p.Match) == 0 {
			ch.fail(key+".match", "list at least one conversation glob gateway:chat[:thread], e.g. %s", quote("slack:C0OPS*"))
		}
		for j, g := range p.Match {
			checkConvGlob(ch, fmt.Sprintf("%s.match[%d]", key, j), g)
		}
		seen := map[string]int{}
		for j, name := range p.Providers {
			k := fmt.Sprintf("%s.providers[%d]", key, j)
			if !known[name] {
				ch.fail(k, "unknown provider %s (llm.providers names: %s)", quote(name), orList(providerNames(providers)))
			}
			if first, dup := seen[name]; dup {
				ch.fail(k, "provider %s is listed twice (also %s.providers[%d])", quote(name), key, first)
			}
			seen[name] = j
		}
		if p.Model != "" && hasSpace(p.Model) {
			ch.fail(key+".model", "want a model name without spaces, got %s", quote(p.Model))
		}
		for j, g := range p.Tools {
			checkGlob(ch, fmt.Sprintf("%s.tools[%d]", key, j), g)
		}
		for j, g := range p.Skills {
			checkGlob(ch, fmt.Sprintf("%s.skills[%d]", key, j), g)
		}
		p.Policy.checkAt(ch, key+".policy")
		for j, a := range p.Approvers {
			k := fmt.Sprintf("%s.approvers[%d]", key, j)
			if strings.HasPrefix(strings.TrimSpace(a), "schedule:") {
				ch.fail(k, "%s: a schedule is never an approver", quote(a))
				continue
			}
			ch.identity(k, a)
		}
		notNegative(ch, key+".budget.conversation_daily_tokens", float64(p.Budget.ConversationDailyTokens))
	}
}

// providerNames lists the providers' names.
func providerNames(providers []Provider) []string {
	if len(providers) == 0 {
		return []string{"none"}
	}
	return Profile{}.ProviderNames(providers)
}

// checkGlob checks a path.Match glob: not empty, no space, well formed.
func checkGlob(ch *checker, key, g string) bool {
	if g == "" || hasSpace(g) {
		ch.fail(key, "want a glob without spaces, got %s", quote(g))
		return false
	}
	if _, err := path.Match(g, ""); err != nil {
		ch.fail(key, "bad glob %s", quote(g))
		return false
	}
	return true
}

// checkConvGlob checks a glob over conversation keys: a well-formed glob
// gateway:chat[:thread] whose gateway part, unless a glob itself, names a
// gateway.
func checkConvGlob(ch *checker, key, g string) {
	if !checkGlob(ch, key, g) {
		return
	}
	gw, chat, ok := strings.Cut(g, ":")
	if !ok || gw == "" || chat == "" {
		ch.fail(key, "want a conversation glob gateway:chat[:thread] such as %s, got %s", quote("slack:C0OPS*"), quote(g))
		return
	}
	if !strings.ContainsAny(gw, `*?[\`) {
		ch.gateway(key, g, gw)
	}
}
