package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/store"
)

// unfingerprinted are the key paths that differ between instances by
// design and are left out of the fingerprint.
var unfingerprinted = map[string]bool{"store.instance": true}

// maxDiffKeys bounds the keys one warning names.
const maxDiffKeys = 32

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

// differingKeys lists, sorted and at most maxDiffKeys (then "…"), the key
// paths whose hash differs between mine and theirs or that only one has.
func differingKeys(mine, theirs map[string]string) []string {
	var keys []string
	for _, k := range slices.Sorted(maps.Keys(mine)) {
		if theirs[k] != mine[k] {
			keys = append(keys, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(theirs)) {
		if _, ok := mine[k]; !ok {
			keys = append(keys, shown(k))
		}
	}
	slices.Sort(keys)
	if len(keys) > maxDiffKeys {
		keys = append(keys[:maxDiffKeys], "…")
	}
	return keys
}

// compareConfig records this instance's configuration fingerprint (as
// it is in force now) beside its heartbeat row and warns, once per other
// instance alive, naming the keys whose values differ from this one's:
// several instances with different configurations on one store are
// allowed, and easy to get by mistake. It runs at start and after each
// reload. It reports whether it is done (false: the store did not
// answer; the heartbeat loop tries again after the next heartbeat).
func (c *cluster) compareConfig(ctx context.Context) bool {
	if c.prints == nil {
		return true
	}
	fp, version := c.fp.get()
	if err := c.prints.SetConfigFingerprint(ctx, c.self.Name, fp); err != nil {
		c.log.Debug().Err(err).Msg("configuration fingerprint not recorded yet")
		return false
	}
	all, err := c.prints.ConfigFingerprints(ctx, aliveWindow)
	if err != nil {
		c.log.Debug().Err(err).Msg("configuration fingerprints not read yet")
		return false
	}
	c.fp.done(version)
	c.log.Debug().Int("instances", len(all)).Msg("configuration fingerprint recorded; compared with the instances alive")
	for _, name := range slices.Sorted(maps.Keys(all)) {
		if name == c.self.Name {
			continue
		}
		if keys := differingKeys(fp, all[name]); len(keys) > 0 {
			c.log.Warn().Str("other", shown(name)).Strs("keys", keys).
				Msgf("instance %s shares this store with another configuration: %d keys differ (allowed; check that it is meant)", shown(name), len(keys))
		}
	}
	return true
}

// configPrints is the store's side of compareConfig.
type configPrints = store.ConfigFingerprints

// useFingerprint has the cluster compare cfg with the configurations of
// the other instances alive, when the store is shared.
func (a *App) useFingerprint(cfg *config.Config, redact func(string) string) error {
	prints, ok := a.store.(configPrints)
	if !ok || !a.sharedStore() {
		return nil
	}
	fp, err := configFingerprint(cfg, redact)
	if err != nil {
		return err
	}
	a.cluster.prints, a.cluster.redact = prints, redact
	a.cluster.fp.set(fp)
	return nil
}
