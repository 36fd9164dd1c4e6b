package main

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core/tools/mcp"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// doctorMCP starts every enabled MCP server (in parallel, each within its
// start_timeout), lists its tools and stops it: a server that cannot start
// is a warning: the bot runs without its tools, and keeps trying to start
// it. Nothing printed holds a secret (env and header values). It returns
// the tools of the servers that started, and the names of those that did
// not (whose tools are unknown).
func doctorMCP(ctx context.Context, r *report, cfg *config.Config, sec *secrets.Set) (tools, down []string) {
	for _, s := range cfg.MCP.Servers {
		if !s.On() {
			r.line("mcp", "%s: disabled", s.Name)
		}
	}
	servers := app.MCPServers(cfg)
	lines := make([]string, len(servers))
	failed := make([]bool, len(servers))
	found := make([][]string, len(servers))
	var wg sync.WaitGroup
	for i, c := range servers {
		wg.Go(func() {
			where := c.Command
			if c.URL != "" {
				where = config.RedactURL(c.URL)
			}
			names, err := mcp.Probe(ctx, c, zerolog.Nop(), sec)
			if err != nil {
				lines[i], failed[i] = fmt.Sprintf("%s (%s %s): %v", c.Name, c.Transport(), where, err), true
				return
			}
			found[i] = names
			lines[i] = fmt.Sprintf("%s (%s %s): started, %d tools: %s", c.Name, c.Transport(), where, len(names), strings.Join(names, ", "))
		})
	}
	wg.Wait()
	for i, l := range lines {
		l = textutil.Visible(sec.Redact(l))
		if failed[i] {
			r.warning("mcp", "%s", l)
			down = append(down, servers[i].Name)
		} else {
			r.line("mcp", "%s", l)
			tools = append(tools, found[i]...)
		}
	}
	return tools, down
}
