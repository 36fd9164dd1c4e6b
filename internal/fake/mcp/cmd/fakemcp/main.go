// Command fakemcp serves the fake MCP server (internal/fake/mcp) over
// stdio, for tests. See mcp.Build for its environment.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	fakemcp "github.com/gatehouse-bot/gatehouse/internal/fake/mcp"
)

func main() {
	if v := os.Getenv("FAKE_MCP_FAIL_START"); v != "" {
		// Its value is said too: a test passes a secret to see it redacted.
		fmt.Fprintln(os.Stderr, "fakemcp: failing to start on purpose:", v)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	s := fakemcp.NewServer(fakemcp.Options{
		Workspace: os.Getenv("FAKE_MCP_WORKSPACE"),
		CallLog:   os.Getenv("FAKE_MCP_CALLS"),
		Note:      os.Getenv("FAKE_MCP_NOTE"),
		Await:     os.Getenv("FAKE_MCP_AWAIT") != "",
	})
	if err := s.Run(ctx, &sdk.StdioTransport{}); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "fakemcp:", err)
		os.Exit(1)
	}
}
