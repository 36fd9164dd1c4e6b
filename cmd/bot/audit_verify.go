package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gatehouse-bot/gatehouse/app/storetable"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/auditchain"
)

// The exit codes of `bot audit verify`: the chain holds (exitOK), does not
// (exitChainBroken), or could not be checked (exitUnverified: a bad
// configuration, a database that is not there or cannot be opened or read).
const (
	exitChainBroken = 1
	exitUnverified  = 2
)

// auditVerify walks the audit log's hash chain (store/auditchain) from a
// read-only store, beside a running bot.
func auditVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags, path := newFlags("audit verify", stderr)
	if code, done := parseFlags(flags, args); done {
		return code
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "bot audit verify: unexpected argument %q\n", flags.Arg(0))
		return exitUnverified
	}
	cfg, _, code := loadConfig(*path, stderr)
	if cfg == nil {
		return code
	}
	db, err := storetable.OpenReadOnly(ctx, cfg)
	if errors.Is(err, store.ErrNotCreated) {
		d, _ := storetable.Lookup(cfg.Store.Driver) // loadConfig checked it
		fmt.Fprintf(stderr, "bot audit verify: no database at %s: nothing to verify\n", d.Where(cfg))
		return exitUnverified
	}
	if err != nil {
		fmt.Fprintln(stderr, "bot audit verify: cannot open the store:", err)
		return exitUnverified
	}
	defer db.Close()
	res, err := auditchain.Verify(ctx, db)
	if err != nil {
		fmt.Fprintln(stderr, "bot audit verify: cannot read the audit log:", err)
		return exitUnverified
	}
	if res.Break != nil {
		fmt.Fprintf(stdout, "audit chain BROKEN at row %d: %s (%d rows before it checked)\n", res.Break.ID, res.Break.Why, res.Checked)
		return exitChainBroken
	}
	fmt.Fprintf(stdout, "audit chain holds: %d rows checked", res.Checked)
	if res.AnchorID > 0 || res.Legacy > 0 {
		fmt.Fprintf(stdout, ", %d written before the chain began (ids up to %d: counted, not hashed)", res.Legacy, res.AnchorID)
	}
	fmt.Fprintf(stdout, "\nhead: row %d sha256:%s\n", res.HeadID, res.Head)
	return exitOK
}
