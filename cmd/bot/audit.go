package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gatehouse-bot/gatehouse/store/auditfmt"
	"github.com/gatehouse-bot/gatehouse/store/record"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// audit prints recent audit entries: executed tool calls and approval
// decisions.
func audit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, path := newFlags("audit", stderr)
	since := fs.String("since", "24h", "how far back: 90m, 24h, 7d")
	conv := fs.String("conv", "", "only this conversation key")
	tool := fs.String("tool", "", "only this tool")
	status := fs.String("status", "", "only this outcome (executed, failed, approved, denied, expired, …)")
	limit := fs.Int("limit", 100, "at most this many entries")
	asJSON := fs.Bool("json", false, "print JSON")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	back, err := auditfmt.ParseSince(*since)
	if err != nil {
		fmt.Fprintln(stderr, "bot audit: -since:", err)
		return exitConfig
	}
	cfg, _, code := loadConfig(*path, stderr)
	if cfg == nil {
		return code
	}
	db, err := sqlite.Open(ctx, cfg.Store.DSN.Value(), sqlite.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintln(stderr, "bot audit:", err)
		return exitFail
	}
	defer db.Close()
	entries, err := db.QueryAudit(ctx, record.AuditFilter{
		Conv: *conv, Tool: *tool, Outcome: *status, Since: time.Now().Add(-back), Limit: *limit,
	})
	if err != nil {
		fmt.Fprintln(stderr, "bot audit:", err)
		return exitFail
	}
	if err := auditfmt.WriteAudit(stdout, entries, *asJSON); err != nil {
		fmt.Fprintln(stderr, "bot audit:", err)
		return exitFail
	}
	return exitOK
}
