package app

import (
	"strings"

	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/app/storetable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// checkConfig finds, before anything is opened or connected, what the
// configuration allows but this build cannot run: a store driver it does not
// have, or no gateway anybody could talk to. Its errors match ErrConfig.
func checkConfig(cfg *config.Config, o Options) error {
	if err := CheckStore(cfg); err != nil {
		return err
	}
	if len(o.Gateways) > 0 {
		return nil
	}
	sections, err := gatewaytable.Sections(cfg.Gateways)
	if err != nil {
		return err
	}
	for _, s := range sections {
		// A gateway on the bot's own terminal needs one; a section that
		// has no adapter in this build does not run (its doctor says so).
		if t, ok := s.Section.(gateways.TerminalUser); ok && t.UsesTerminal() && o.Stdin == nil {
			continue
		}
		if s.Section.Doctor().Runs {
			return nil
		}
	}
	keys := make([]string, len(sections))
	for i, s := range sections {
		keys[i] = "gateways." + s.Name
	}
	return configErrorf("gateways: none is enabled, so nobody could talk to the bot (enable one of %s: set its credentials)", strings.Join(keys, ", "))
}

// CheckStore fails, with an error matching ErrConfig, when this build has no
// driver for store.driver (app/storetable) or the driver finds the
// store's keys wrong without connecting (a store.dsn that does not parse).
func CheckStore(cfg *config.Config) error {
	if err := storetable.Check(cfg); err != nil {
		return configErrorf("%v", err)
	}
	return nil
}
