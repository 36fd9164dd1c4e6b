package app

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// How a reload was asked for, as its audit row says.
const (
	ReloadBySignal = "SIGHUP"
	ReloadByHTTP   = "POST /-/reload"
)

// The audit row of a reload that changed what it audits: Tool
// ReloadAuditTool, Outcome ReloadAuditOutcome.
const (
	ReloadAuditTool    = "config"
	ReloadAuditOutcome = "reconfigured"
)

// reloadAudited reports whether a change of the configuration key path
// (configFingerprint's) is audited on a reload: who may approve and what
// is allowed. That is everything under hitl (approvers, people, notify,
// and whatever decides who else is asked or what an approval allows:
// escalation, grants' limits), the policy and the profiles (which carry
// approvers and policies of their own).
func reloadAudited(key string) bool {
	return strings.HasPrefix(key, "hitl.") || strings.HasPrefix(key, "policy.") || key == "policy" ||
		key == "profiles" || strings.HasPrefix(key, "profiles.")
}

// auditedPrints is the part of cfg's fingerprint that reloads audit.
func auditedPrints(cfg *config.Config, redact func(string) string) (map[string]string, error) {
	fp, err := configFingerprint(cfg, redact)
	if err != nil {
		return nil, err
	}
	maps.DeleteFunc(fp, func(k, _ string) bool { return !reloadAudited(k) })
	return fp, nil
}

// reloadChange is one audited key a reload changed, in the audit row's
// arguments: the digests (configFingerprint's: SHA-256 of the key's value
// as canonical JSON, secrets redacted, 128 bits, hex) of its value before
// and after, "" for a key that was not set.
type reloadChange struct {
	Key string `json:"key"`
	Old string `json:"old"`
	New string `json:"new"`
}

// auditReload writes one audit row when the configuration next, applied
// by a reload asked for by how, changed an audited key since the last
// configuration applied; nothing otherwise. A row that cannot be written
// is logged: the configuration is applied by then.
func (a *App) auditReload(ctx context.Context, next *config.Config, how string) {
	var err error
	if a.reload.prints == nil { // the first reload: compare with the start's
		if a.reload.prints, err = auditedPrints(a.cfg, a.reload.redact); err != nil {
			a.log.Error().Err(err).Msg("config reload: could not fingerprint the configuration for the audit")
			return
		}
	}
	now, err := auditedPrints(next, a.reload.redact)
	if err != nil {
		a.log.Error().Err(err).Msg("config reload: could not fingerprint the configuration for the audit")
		return
	}
	var changes []reloadChange
	keys := slices.Sorted(maps.Keys(now))
	for _, k := range slices.Sorted(maps.Keys(a.reload.prints)) {
		if _, ok := now[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if a.reload.prints[k] != now[k] {
			changes = append(changes, reloadChange{Key: k, Old: a.reload.prints[k], New: now[k]})
		}
	}
	if len(changes) == 0 {
		return
	}
	args, err := json.Marshal(struct {
		How     string         `json:"how"`
		Changed []reloadChange `json:"changed"`
	}{how, changes})
	if err != nil {
		a.log.Error().Err(err).Msg("config reload: audit row")
		return
	}
	names := make([]string, len(changes))
	for i, c := range changes {
		names[i] = c.Key
	}
	e := record.AuditEntry{At: time.Now(), Tool: ReloadAuditTool, Args: string(args), Outcome: ReloadAuditOutcome,
		Detail: fmt.Sprintf("reload (%s) changed %s", how, strings.Join(names, ", "))}
	if err := a.store.AppendAudit(ctx, e); err != nil {
		a.log.Error().Err(err).Strs("keys", names).Msg("config reload applied, but its audit row could not be written")
		return
	}
	a.reload.prints = now
	a.log.Info().Strs("keys", names).Str("how", how).Msg("config reload audited")
}
