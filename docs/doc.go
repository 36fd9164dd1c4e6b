// Package docs holds gatehouse's documentation, one Markdown page per
// topic, with README.md at the module's root as the front door. It has no
// code: its tests keep the pages honest (every relative link and #anchor
// of README.md and the pages resolves; README.md stays a short front door
// that links to every page). The configuration reference,
// configuration.md, is checked against the configuration types by
// config's TestConfigurationReferenceHasEveryKey.
package docs
