package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/storetable"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/auditfmt"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// auditStatuses are the outcomes an audit entry can have (record.AuditEntry).
var auditStatuses = []string{
	"requested", "allowed", "approved", "denied", "expired", "executed",
	"failed", "interrupted", "refused", "unallowed",
}

// audit prints recent audit entries: executed tool calls and approval
// decisions.
func audit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags, path := newFlags("audit", stderr)
	since := flags.String("since", "24h", "how far back: 90m, 24h, 7d")
	conv := flags.String("conv", "", "only this conversation key")
	tool := flags.String("tool", "", "only this tool")
	status := flags.String("status", "", "only this outcome: "+strings.Join(auditStatuses, ", "))
	limit := flags.Int("limit", 100, "at most this many entries")
	asJSON := flags.Bool("json", false, "print JSON")
	if code, done := parseFlags(flags, args); done {
		return code
	}
	back, err := auditfmt.ParseSince(*since)
	if err != nil {
		fmt.Fprintln(stderr, "bot audit: -since:", err)
		return exitConfig
	}
	if *status != "" && !slices.Contains(auditStatuses, *status) {
		fmt.Fprintf(stderr, "bot audit: -status %q: want one of %s\n", *status, strings.Join(auditStatuses, ", "))
		return exitConfig
	}
	cfg, _, code := loadConfig(*path, stderr)
	if cfg == nil {
		return code
	}
	db, err := storetable.OpenReadOnly(ctx, cfg)
	if errors.Is(err, store.ErrNotCreated) {
		// A bot that never ran has audited nothing: that is an answer.
		d, _ := storetable.Lookup(cfg.Store.Driver) // loadConfig checked it
		fmt.Fprintf(stdout, "no database at %s yet: nothing has been audited (the bot creates it on its first run)\n", d.Where(cfg))
		return exitOK
	}
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
