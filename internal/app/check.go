package app

import "github.com/gatehouse-bot/gatehouse/internal/config"

// checkConfig finds, before anything is opened or connected, what the
// configuration allows but this build cannot run: a store driver it does not
// have, or no gateway anybody could talk to. Its errors match ErrConfig.
func checkConfig(cfg *config.Config, o Options) error {
	if err := CheckStore(cfg); err != nil {
		return err
	}
	console := cfg.Gateways.Console.Enabled() && o.Stdin != nil
	// Discord and Slack have no adapter in this build (buildGateways warns
	// and ignores them), so they do not count.
	if !console && !cfg.Gateways.Telegram.Enabled() && len(o.Gateways) == 0 {
		return configErrorf("gateways: none is enabled, so nobody could talk to the bot (enable gateways.console or set a platform token)")
	}
	return nil
}

// CheckStore fails, with an error matching ErrConfig, when this build has no
// driver for store.driver: the configuration accepts "postgres", which has
// none yet.
func CheckStore(cfg *config.Config) error {
	if d := cfg.Store.Driver; d != "sqlite" && d != "" {
		return configErrorf("store.driver: %q is not supported by this build yet (use \"sqlite\")", d)
	}
	return nil
}
