package app

import (
	"strings"

	"github.com/gatehouse-bot/gatehouse/config"
)

// modelName says which model answers, for /status: each usable provider's
// model in cascade order, or the offline demo model.
func modelName(cfg *config.Config) string {
	var names []string
	for _, p := range cfg.LLM.Providers {
		if ProviderSkipped(p) == "" {
			names = append(names, p.Model+" ("+p.Name+")")
		}
	}
	if len(names) == 0 {
		return "the offline demo model"
	}
	return strings.Join(names, ", then ")
}
