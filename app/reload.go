package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-bot/gatehouse/budget"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/schedule"
)

// reloader holds what a reload needs besides the App's parts.
type reloader struct {
	mu          sync.Mutex // one reload at a time
	load        func() (*config.Config, error)
	setLogLevel func(level string)
	// redact and prints are for the reload's audit (auditReload): the
	// secrets' redaction and the audited keys' fingerprint of the
	// configuration applied last (nil until the first reload: the
	// start's).
	redact func(string) string
	prints map[string]string
}

// ErrNoReload is Reload's error when the App was built without
// Options.Load.
var ErrNoReload = errors.New("reload: this bot was started without a configuration file to read again")

// Reload reads the configuration again (Options.Load) and applies, for the
// next message, what can change while the bot runs: the gateways' allow
// lists and pairing, hitl.approvers and hitl.people, policy.rules, profiles, budget and every provider's price
// (llm.providers[N].price, for the next request), schedules and log.level. Every other key that differs from the
// running configuration is logged, by name and never with its value, as
// changed and needing a restart; it is not applied. A configuration that
// does not load or does not fit the running bot is rejected: nothing
// changes, the error names the key. Reloads are serialised; the reload
// metrics record each one.
func (a *App) Reload(ctx context.Context) error {
	return a.ReloadBy(ctx, "")
}

// ReloadBy is Reload asked for by how (ReloadBySignal, ReloadByHTTP, ...):
// a reload that changes who may approve, the policy or the profiles
// writes one audit row saying which keys changed, with digests of their
// old and new values, and how.
func (a *App) ReloadBy(ctx context.Context, how string) error {
	a.reload.mu.Lock()
	defer a.reload.mu.Unlock()
	restart, err := a.reloadLocked(ctx, cmp.Or(how, "unspecified"))
	a.metrics.SetReload(err == nil, time.Now())
	if err != nil {
		a.log.Error().Err(err).Msg("config reload rejected; the running configuration is kept")
		return err
	}
	for _, key := range restart {
		a.log.Warn().Str("key", key).Msgf("config reload: %s changed; needs a restart (the running value is kept)", key)
	}
	a.log.Info().Int("needs_restart", len(restart)).Msg("config reloaded: allow lists, approvers, policy, profiles, budgets, prices, schedules and log level apply to the next message")
	return nil
}

// reloadLocked loads and checks the new configuration, then swaps it in;
// it returns the keys that changed but need a restart.
func (a *App) reloadLocked(ctx context.Context, how string) ([]string, error) {
	if a.reload.load == nil {
		return nil, ErrNoReload
	}
	cfg, err := a.reload.load()
	if err != nil {
		return nil, err
	}
	// Everything that can fail is checked before anything is swapped.
	rules, err := policyRules(cfg)
	if err != nil {
		return nil, err
	}
	entries, err := ScheduleEntries(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := schedule.New(entries, schedule.Options{}); err != nil {
		return nil, err
	}
	if err := a.checkScheduleGateways(cfg); err != nil {
		return nil, err
	}
	hooks, err := WebhookHooks(cfg)
	if err != nil {
		return nil, err
	}
	if err := a.checkWebhookGateways(cfg); err != nil {
		return nil, err
	}
	caps, prices := budgetLimits(cfg)
	if err := a.keepRunningPrices(cfg, caps, prices); err != nil {
		return nil, err
	}
	if err := checkApprovers(cfg, a.enabled); err != nil {
		return nil, err
	}
	profiles, err := buildProfiles(cfg, a.cfg.LLM.Providers, a.profileHTTP, a.log, a.metrics, a.budget)
	if err != nil {
		return nil, err
	}
	nudge, err := nudges(cfg)
	if err != nil {
		return nil, err
	}
	approvers := identities(cfg.HITL.Approvers)
	if err := a.broker.SetApprovers(approvers, people(cfg)...); err != nil {
		return nil, fmt.Errorf("hitl.approvers, hitl.people: %w", err)
	}
	if err := a.broker.SetNudges(nudge); err != nil {
		return nil, fmt.Errorf("hitl.remind_after, hitl.escalate: %w", err) // checked by the config; kept for safety
	}
	// From here nothing fails.
	a.auth.Set(allowLists(cfg), approvers)
	a.auth.SetPairing(a.pairing, PairingGateways(cfg))
	a.policy.SetRules(rules)
	a.profiles.Set(profiles)
	a.budget.Set(caps, prices)
	if err := a.sched.SetEntries(entries); err != nil {
		return nil, err // checked above; kept for safety
	}
	a.webhooks.SetHooks(hooks)
	if a.reload.setLogLevel != nil {
		a.reload.setLogLevel(cfg.Log.Level)
	}
	a.auditReload(ctx, cfg, how)
	a.reloadSkills(ctx)
	restart := restartKeys(a.cfg, cfg)
	// The other instances' /status and doctor compare with what is now
	// in force here.
	a.reloadedFingerprint(ctx, cfg, restart)
	return restart, nil
}

// keepRunningPrices adds to prices, the next configuration's, the price
// of each running provider that configuration no longer names. Providers
// are built at start-up, so one the file renames or removes goes on
// answering under its running name until a restart: it keeps its running
// price, so that a rename cannot make its requests free. Should it have
// none while next sets budget.daily_usd, it would spend unseen by that
// cap: the reload is rejected.
func (a *App) keepRunningPrices(next *config.Config, caps budget.Caps, prices budget.Prices) error {
	named := make(map[string]bool, len(next.LLM.Providers))
	for _, p := range next.LLM.Providers {
		named[p.Name] = true
	}
	for i, p := range a.cfg.LLM.Providers {
		if named[p.Name] {
			continue
		}
		if price, ok := a.budget.Price(p.Name); ok {
			prices[p.Name] = price
			continue
		}
		if caps.DailyUSD > 0 {
			return fmt.Errorf("budget.daily_usd: the running provider %q (llm.providers[%d]) has no price, and the new configuration no longer names it: it answers under that name until a restart", p.Name, i)
		}
	}
	return nil
}

// reloadable are the keys Reload applies, as restartKeys names them; a
// gateway's allow list and pairing (gatewayReloadable) are
// gateways.<name>.allow and gateways.<name>.pairing.
var reloadable = map[string]bool{
	"hitl.approvers":    true,
	"hitl.people":       true,
	"hitl.remind_after": true,
	"hitl.escalate":     true,
	"policy":            true,
	"budget":            true,
	"schedules":         true,
	"webhooks":          true,
	"log.level":         true,
	"profiles":          true,
}

// restartKeys names the keys whose value differs between the running
// configuration and next and that Reload does not apply. Values are
// compared, never shown.
func restartKeys(running, next *config.Config) []string {
	var keys []string
	add := func(key string) {
		if !reloadable[key] && !gatewayReloadable(key) && !isPrice.MatchString(key) {
			keys = append(keys, key)
		}
	}
	rv, nv := reflect.ValueOf(running).Elem(), reflect.ValueOf(next).Elem()
	t := rv.Type()
	for i := range t.NumField() {
		name := yamlName(t.Field(i))
		if name == "" {
			continue
		}
		if name == "gateways" {
			for _, gw := range running.Gateways.Names() {
				diffKeys("gateways."+gw, reflect.ValueOf(running.Gateways.Section(gw)), reflect.ValueOf(next.Gateways.Section(gw)), add)
			}
			continue
		}
		diffKeys(name, rv.Field(i), nv.Field(i), add)
	}
	return keys
}

// gatewayReloadable reports whether key is a gateway's key that Reload
// applies: its allow list or its pairing.
func gatewayReloadable(key string) bool {
	return strings.HasSuffix(key, ".allow") || strings.HasSuffix(key, ".pairing")
}

// isPrice matches the key of a provider's price, which Reload applies
// (budgetLimits): llm.providers[N].price and the keys below it.
var isPrice = regexp.MustCompile(`^llm\.providers\[\d+\]\.price(\.|$)`)

// diffKeys calls add with the key of every leaf that differs between a and
// b: struct fields by their yaml names, lists element by element (a list
// of another length is one change of the list), anything else whole.
// Keys Reload applies are not descended into.
func diffKeys(key string, a, b reflect.Value, add func(string)) {
	if reloadable[key] || gatewayReloadable(key) {
		return
	}
	for a.Kind() == reflect.Pointer || a.Kind() == reflect.Interface {
		if a.IsNil() || b.IsNil() || a.Kind() != b.Kind() {
			if a.IsNil() != b.IsNil() {
				add(key)
			}
			return
		}
		a, b = a.Elem(), b.Elem()
	}
	if a.Type() != b.Type() {
		add(key)
		return
	}
	switch a.Kind() {
	case reflect.Struct:
		t := a.Type()
		for i := range t.NumField() {
			if name := yamlName(t.Field(i)); name != "" {
				diffKeys(key+"."+name, a.Field(i), b.Field(i), add)
			}
		}
	case reflect.Slice:
		if a.Len() != b.Len() {
			add(key)
			return
		}
		for i := range a.Len() {
			diffKeys(fmt.Sprintf("%s[%d]", key, i), a.Index(i), b.Index(i), add)
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			add(key)
		}
	}
}

// yamlName is the key of an exported field with a yaml tag, else "".
func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}
