package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/app/storetable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/auditfmt"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// auditStatuses are the outcomes an audit entry can have (record.AuditEntry).
var auditStatuses = []string{
	"requested", "allowed", "approved", "denied", "expired", "executed",
	"failed", "interrupted", "refused", "unallowed", "received", "paired", "unpaired", "reconfigured",
	"reminded", "escalated", "granted", "grant-expired", "skill-enabled", "skill-disabled",
}

// audit prints recent audit entries: executed tool calls and approval
// decisions; with -usage, the token usage of each UTC day instead.
func audit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "verify" {
		return auditVerify(ctx, args[1:], stdout, stderr)
	}
	flags, path := newFlags("audit", stderr)
	since := flags.String("since", "24h", "how far back: 90m, 24h, 7d")
	conv := flags.String("conv", "", "only this conversation key")
	tool := flags.String("tool", "", "only this tool")
	status := flags.String("status", "", "only this outcome: "+strings.Join(auditStatuses, ", "))
	limit := flags.Int("limit", 100, "at most this many entries")
	asJSON := flags.Bool("json", false, "print JSON")
	usage := flags.Bool("usage", false, "print token usage per UTC day (all conversations; USD as recorded at each provider's price) instead of entries")
	if code, done := parseFlags(flags, args); done {
		return code
	}
	if *usage && (*conv != "" || *tool != "" || *status != "") {
		fmt.Fprintln(stderr, "bot audit: -usage counts all conversations: it takes no -conv, -tool or -status")
		return exitConfig
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
		note := fmt.Sprintf("no database at %s yet: nothing has been audited (the bot creates it on its first run)", d.Where(cfg))
		if !*asJSON {
			fmt.Fprintln(stdout, note)
			return exitOK
		}
		// A script reads stdout: it gets the empty list, people the note.
		fmt.Fprintln(stderr, "bot audit:", note)
		write := func() error { return auditfmt.WriteAudit(stdout, nil, true) }
		if *usage {
			write = func() error { return auditfmt.WriteUsage(stdout, nil, false, true) }
		}
		if err := write(); err != nil {
			fmt.Fprintln(stderr, "bot audit:", err)
			return exitFail
		}
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "bot audit:", err)
		return exitFail
	}
	defer db.Close()
	if *usage {
		return auditUsage(ctx, db, cfg, time.Now().Add(-back), *asJSON, stdout, stderr)
	}
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

// auditUsage prints the token usage of each UTC day since since, with its
// cost as recorded (each request at the price of the provider that
// answered it) when a provider has a price or a listed day has a cost.
func auditUsage(ctx context.Context, db store.UsageStore, cfg *config.Config, since time.Time, asJSON bool, stdout, stderr io.Writer) int {
	days, err := db.UsageDays(ctx, since)
	if err != nil {
		fmt.Fprintln(stderr, "bot audit:", err)
		return exitFail
	}
	withUSD := slices.ContainsFunc(cfg.LLM.Providers, func(p config.Provider) bool { return p.Price != nil }) ||
		slices.ContainsFunc(days, func(d store.DayUsage) bool { return d.Usage.CostUSD != 0 })
	if err := auditfmt.WriteUsage(stdout, days, withUSD, asJSON); err != nil {
		fmt.Fprintln(stderr, "bot audit:", err)
		return exitFail
	}
	return exitOK
}
