package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/gatehouse-bot/gatehouse/cluster"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/store"
)

// unfingerprinted are the key paths that differ between instances by
// design and are left out of the fingerprint.
var unfingerprinted = map[string]bool{"store.instance": true}

// configFingerprint is cfg's fingerprint, for comparing the configuration
// of instances sharing a store without storing it: for each top-level key
// path (a section's key, "policy.rules"; a gateway, "gateways.<name>";
// a top-level list, "schedules"), the SHA-256 of its value as canonical
// JSON, secrets redacted (confkit.Secret marshals as "<secret>", and
// redact removes any other secret the bot holds), cut to 128 bits.
func configFingerprint(cfg *config.Config, redact func(string) string) (map[string]string, error) {
	raw, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("config fingerprint: %w", err)
	}
	var top map[string]any
	if err := yaml.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("config fingerprint: %w", err)
	}
	fp := map[string]string{}
	add := func(path string, v any) error {
		if unfingerprinted[path] {
			return nil
		}
		b, err := json.Marshal(v) // map keys sorted: canonical
		if err != nil {
			return fmt.Errorf("config fingerprint %s: %w", path, err)
		}
		sum := sha256.Sum256([]byte(redact(string(b))))
		fp[path] = hex.EncodeToString(sum[:16])
		return nil
	}
	for key, v := range top {
		section, ok := v.(map[string]any)
		if !ok {
			if err := add(key, v); err != nil {
				return nil, err
			}
			continue
		}
		for sub, sv := range section {
			if err := add(key+"."+sub, sv); err != nil {
				return nil, err
			}
		}
	}
	return fp, nil
}

// useFingerprint has the cluster compare cfg with the configurations of
// the other instances alive, when the store is shared.
func (a *App) useFingerprint(cfg *config.Config, redact func(string) string) error {
	prints, ok := a.store.(store.ConfigFingerprints)
	if !ok || !a.sharedStore() {
		return nil
	}
	fp, err := configFingerprint(cfg, redact)
	if err != nil {
		return err
	}
	a.member.UseFingerprints(prints, fp)
	return nil
}

// reloadedFingerprint has the cluster record, and compare with the other
// instances', the configuration in force after a reload to cfg
// (cluster.Member.Reloaded), restart naming the keys not applied until a
// restart.
func (a *App) reloadedFingerprint(ctx context.Context, cfg *config.Config, restart []string) {
	next := func() (map[string]string, error) { return configFingerprint(cfg, a.reload.redact) }
	a.member.Reloaded(ctx, next, restart)
}

// ConfigDiffs is what `bot doctor` says of the configurations of the
// instances alive on a shared store (st, read-only): each pair of
// instances whose configurations differ, with the keys (differ), and each
// instance whose configuration differs from cfg, the file doctor read,
// with the keys (fromFile); redact is the bot's (doctor's secrets). Keys
// and names from the store are shown on one line, bounded; each list is
// capped as /status caps its lists. alive counts the instances that
// recorded a configuration (cluster.ConfigDiffs).
func ConfigDiffs(ctx context.Context, st store.ConfigFingerprints, cfg *config.Config, redact func(string) string) (differ, fromFile []string, alive int, err error) {
	mine, err := configFingerprint(cfg, redact)
	if err != nil {
		return nil, nil, 0, err
	}
	return cluster.ConfigDiffs(ctx, st, mine)
}
