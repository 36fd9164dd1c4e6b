package app

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/budget"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// profilePolicy converts profiles to the core's as far as the policy
// needs them: names, globs, tools, rules and approvers. `bot policy test`
// judges with these; the running bot adds providers and budgets
// (buildProfiles).
func profilePolicy(cfg *config.Config) ([]core.Profile, error) {
	out := make([]core.Profile, len(cfg.Profiles))
	for i, p := range cfg.Profiles {
		rules, err := rulesOf(p.Policy, fmt.Sprintf("profiles[%d].policy", i), p.Name)
		if err != nil {
			return nil, err
		}
		out[i] = core.Profile{
			Name: p.Name, Match: p.Match, Tools: p.Tools, Skills: p.Skills, Rules: rules,
			SystemPrompt: p.SystemPrompt, Approvers: identities(p.Approvers),
		}
	}
	return out, nil
}

// buildProfiles converts profiles to the core's. Each profile that names
// providers or a model gets its own cascade, over running: the providers
// the bot started with, since a change of llm.providers needs a restart
// (a reload's profile may name only those). b prices and caps them; rec
// records their requests.
//
// clients keeps one HTTP client per provider name for the profiles'
// providers, so that reloads, which build them again, reuse its
// connections; it is only used under the App's build or reload.
func buildProfiles(cfg *config.Config, running []config.Provider, clients map[string]*http.Client, log zerolog.Logger, rec llm.Recorder, b *budget.Budget) ([]core.Profile, error) {
	out, err := profilePolicy(cfg)
	if err != nil {
		return nil, err
	}
	for i, p := range cfg.Profiles {
		if len(p.Providers) > 0 || p.Model != "" {
			if out[i].Provider, out[i].Model, err = profileProvider(cfg, i, running, clients, log, rec, b); err != nil {
				return nil, err
			}
		}
		if n := p.Budget.ConversationDailyTokens; n > 0 {
			out[i].Budget = b.PerConversation(n, fmt.Sprintf("profiles[%d].budget.conversation_daily_tokens", i))
		}
	}
	return out, nil
}

// profileProvider builds the cascade of cfg.Profiles[i] over running,
// with p.Model in place of each provider's own when set, and says which
// models answer, for /status. With no usable provider it is the offline
// demo model, as the top level would be.
func profileProvider(cfg *config.Config, i int, running []config.Provider, clients map[string]*http.Client, log zerolog.Logger, rec llm.Recorder, b *budget.Budget) (llm.Provider, string, error) {
	p := cfg.Profiles[i]
	byName := make(map[string]config.Provider, len(running))
	for _, pr := range running {
		byName[pr.Name] = pr
	}
	var ps []llm.Provider
	var models []string
	for j, name := range p.ProviderNames(running) {
		pr, ok := byName[name]
		if !ok {
			return nil, "", configErrorf("profiles[%d].providers[%d]: the provider %q is not running: a change of llm.providers needs a restart", i, j, name)
		}
		if p.Model != "" {
			pr.Model = p.Model
		}
		if why := ProviderSkipped(pr); why != "" {
			log.Warn().Str("profile", p.Name).Str("provider", pr.Name).Str("reason", why).Msg("llm provider skipped in a profile")
			continue
		}
		if clients[name] == nil {
			clients[name] = &http.Client{Transport: llm.NewTransport()}
		}
		prov, err := newOpenAI(cfg, pr, clients[name])
		if err != nil {
			return nil, "", fmt.Errorf("profiles[%d]: provider %q: %w", i, name, err)
		}
		ps = append(ps, llm.Observed(b.Priced(prov), rec))
		models = append(models, pr.Model+" ("+pr.Name+")")
	}
	switch len(ps) {
	case 0:
		log.Warn().Str("profile", p.Name).Msg("no usable llm provider in a profile: its conversations get the offline DEMO model")
		return llm.Observed(llm.NewDemo(), rec), "the offline demo model", nil
	case 1:
		return ps[0], models[0], nil
	}
	return llm.NewCascade(log, ps...), strings.Join(models, ", then "), nil
}
