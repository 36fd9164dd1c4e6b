package cluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/gatehouse-bot/gatehouse/store"
)

// fingerprintState is this instance's configuration fingerprint as in
// force now, which a reload replaces, and whether the store has it.
type fingerprintState struct {
	mu      sync.Mutex
	fp      map[string]string
	version int // counts set
	stored  int // the version last recorded in the store
}

// set replaces the fingerprint; the heartbeat loop records it unless
// compareConfig does first.
func (s *fingerprintState) set(fp map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fp = fp
	s.version++
}

// get returns the fingerprint and its version.
func (s *fingerprintState) get() (map[string]string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fp, s.version
}

// done notes that version was recorded in the store and compared.
func (s *fingerprintState) done(version int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stored = max(s.stored, version)
}

// recorded reports whether the store has the fingerprint in force.
func (s *fingerprintState) recorded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored == s.version
}

// Reloaded records, on a shared store, the configuration in force after a
// reload, and compares it with the other instances' again (warning of
// the keys that differ): next's values (next computes the reloaded
// configuration's fingerprint), but the running ones for the keys
// restart names, which are not applied until a restart. A store that
// does not answer now gets it with a later heartbeat.
func (c *Member) Reloaded(ctx context.Context, next func() (map[string]string, error), restart []string) {
	if c.prints == nil {
		return
	}
	fp, err := next()
	if err != nil {
		c.log.Warn().Err(err).Msg("configuration fingerprint of the reload not computed; the others see the one before it")
		return
	}
	running, _ := c.fp.get()
	c.fp.set(LiveFingerprint(running, fp, restart))
	c.compareConfig(ctx)
}

// LiveFingerprint is the fingerprint of what is in force after a reload:
// next's, except that every key path holding a key of restart (a key as
// app's restartKeys names it) keeps running's hash. A path that holds both a
// key a reload applies and one it does not (a gateway's allow list and
// its token) keeps its running hash whole: the fingerprint has one hash
// a path.
func LiveFingerprint(running, next map[string]string, restart []string) map[string]string {
	live := maps.Clone(next)
	for _, key := range restart {
		path := fingerprintPath(key)
		for _, p := range slices.Concat(slices.Collect(maps.Keys(running)), slices.Collect(maps.Keys(next))) {
			if p != path && !strings.HasPrefix(p, key+".") {
				continue
			}
			if h, ok := running[p]; ok {
				live[p] = h
			} else {
				delete(live, p)
			}
		}
	}
	return live
}

// fingerprintPath is the key path of the fingerprint (app's
// configFingerprint) that holds key, a key as restartKeys names it: "gateways.<name>.token"
// is in "gateways.<name>", "llm.providers[0].model" in "llm.providers",
// "schedules[1].prompt" in "schedules".
func fingerprintPath(key string) string {
	i := strings.IndexAny(key, ".[")
	switch {
	case i < 0:
		return key
	case key[i] == '[':
		return key[:i]
	}
	j := strings.IndexAny(key[i+1:], ".[")
	if j < 0 {
		return key
	}
	return key[:i+1+j]
}

// configLines says, for /status, in which keys this instance's
// configuration differs from each other instance's alive (as each last
// recorded it), or that it differs from none; nothing when the store is
// not shared or no other instance recorded one.
func (c *Member) configLines(ctx context.Context) []string {
	if c.prints == nil {
		return nil
	}
	all, err := c.prints.ConfigFingerprints(ctx, aliveWindow)
	if err != nil {
		c.log.Error().Err(err).Msg("configuration fingerprints for /status")
		return []string{"Configuration of the other instances: could not be read (the bot's log has the details)"}
	}
	mine, _ := c.fp.get()
	var lines []string
	others := 0
	for _, name := range slices.Sorted(maps.Keys(all)) {
		if name == c.self.Name {
			continue
		}
		others++
		if keys := DifferingKeys(mine, all[name]); len(keys) > 0 {
			lines = append(lines, fmt.Sprintf("Configuration differs from instance %s: %s", shown(name), strings.Join(keys, ", ")))
		}
	}
	switch {
	case others == 0:
		return nil
	case len(lines) == 0:
		return []string{fmt.Sprintf("Configuration: the same as the other instances alive (%d)", others)}
	case len(lines) > statusInstances:
		return append(lines[:statusInstances], fmt.Sprintf("Configuration differs from %d more instances", len(lines)-statusInstances))
	}
	return lines
}

// ConfigDiffs is what `bot doctor` says of the configurations of the
// instances alive on a shared store (st, read-only): each pair of
// instances whose configurations differ, with the keys (differ), and each
// instance whose configuration differs from mine, the fingerprint of the
// file doctor read, with the keys (fromFile). Keys and names from the
// store are shown on one line, bounded; each list is capped as /status
// caps its lists. alive counts the instances that recorded a
// configuration.
func ConfigDiffs(ctx context.Context, st store.ConfigFingerprints, mine map[string]string) (differ, fromFile []string, alive int, err error) {
	all, err := st.ConfigFingerprints(ctx, aliveWindow)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("configuration fingerprints: %w", err)
	}
	names := slices.Sorted(maps.Keys(all))
	for i, x := range names {
		for _, y := range names[i+1:] {
			if keys := DifferingKeys(all[x], all[y]); len(keys) > 0 {
				differ = append(differ, fmt.Sprintf("%s and %s differ in %s", shown(x), shown(y), strings.Join(showAll(keys), ", ")))
			}
		}
		if keys := DifferingKeys(mine, all[x]); len(keys) > 0 {
			fromFile = append(fromFile, fmt.Sprintf("%s differs from this file in %s", shown(x), strings.Join(keys, ", ")))
		}
	}
	return capList(differ), capList(fromFile), len(names), nil
}

// showAll is keys as shown: DifferingKeys shows only the keys the
// second fingerprint alone has; between two instances, both come from
// the store.
func showAll(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = shown(k)
	}
	return out
}

// capList keeps at most statusInstances lines, saying how many more
// there are.
func capList(lines []string) []string {
	if len(lines) <= statusInstances {
		return lines
	}
	return append(lines[:statusInstances:statusInstances], fmt.Sprintf("and %d more", len(lines)-statusInstances))
}

// maxDiffKeys bounds the keys one warning names.
const maxDiffKeys = 32

// DifferingKeys lists, sorted and at most maxDiffKeys (then "…"), the key
// paths whose hash differs between mine and theirs or that only one has
// (those only theirs has shown on one line, bounded: they come from the
// store).
func DifferingKeys(mine, theirs map[string]string) []string {
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

// UseFingerprints has the member compare fp, this instance's
// configuration fingerprint, with those of the other instances alive,
// recorded in prints (the shared store).
func (c *Member) UseFingerprints(prints store.ConfigFingerprints, fp map[string]string) {
	c.prints = prints
	c.fp.set(fp)
}

// compareConfig records this instance's configuration fingerprint (as
// it is in force now) beside its heartbeat row and warns, once per other
// instance alive, naming the keys whose values differ from this one's:
// several instances with different configurations on one store are
// allowed, and easy to get by mistake. It runs at start and after each
// reload. It reports whether it is done (false: the store did not
// answer; the heartbeat loop tries again after the next heartbeat).
func (c *Member) compareConfig(ctx context.Context) bool {
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
		if keys := DifferingKeys(fp, all[name]); len(keys) > 0 {
			c.log.Warn().Str("other", shown(name)).Strs("keys", keys).
				Msgf("instance %s shares this store with another configuration: %d keys differ (allowed; check that it is meant)", shown(name), len(keys))
		}
	}
	return true
}
