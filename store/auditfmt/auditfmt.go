// Package auditfmt renders the audit log for people (`bot audit`, a table)
// and for scripts (`bot audit --json`, a JSON array), and parses the
// --since flag.
package auditfmt

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/gatehouse-bot/gatehouse/store/record"
)

// Entry is the JSON form of one audit entry. The field names are part of
// the `bot audit --json` contract: add fields, never rename them.
type Entry struct {
	At          time.Time `json:"at"` // RFC 3339, UTC
	Conv        string    `json:"conversation"`
	Tool        string    `json:"tool"`
	Args        string    `json:"args"` // the arguments JSON text, possibly shortened
	RequestedBy string    `json:"requested_by"`
	ApprovedBy  string    `json:"approved_by"` // "" when a rule allowed it
	Outcome     string    `json:"outcome"`
	Detail      string    `json:"detail"`
	// Instance is store.instance of the instance that wrote the entry on
	// a store several instances share; left out when none is recorded
	// (SQLite, and entries of a gatehouse before schema 19).
	Instance string `json:"instance,omitempty"`
}

// TimeLayout is how the table shows times, always in UTC.
const TimeLayout = "2006-01-02 15:04:05"

// ArgsWidth is the most characters of an argument summary the table shows.
const ArgsWidth = 48

// WriteAudit writes entries, in the order given, as a table with a header
// (time in UTC, conversation, tool, short argument summary, requested by,
// approved by, outcome, and the instance that wrote it when some entry
// names one: a shared store) or, with asJSON, as one JSON array of Entry ("[]"
// when empty).
func WriteAudit(w io.Writer, entries []record.AuditEntry, asJSON bool) error {
	if asJSON {
		return writeJSON(w, entries)
	}
	return writeTable(w, entries)
}

func writeJSON(w io.Writer, entries []record.AuditEntry) error {
	out := make([]Entry, len(entries))
	for i, e := range entries {
		out[i] = Entry{
			At: e.At.UTC(), Conv: e.Conv, Tool: e.Tool, Args: e.Args,
			RequestedBy: string(e.RequestedBy), ApprovedBy: string(e.ApprovedBy),
			Outcome: e.Outcome, Detail: e.Detail, Instance: e.Instance,
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("audit: write json: %w", err)
	}
	return nil
}

func writeTable(w io.Writer, entries []record.AuditEntry) error {
	instances := slices.ContainsFunc(entries, func(e record.AuditEntry) bool { return e.Instance != "" })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "TIME (UTC)\tCONVERSATION\tTOOL\tARGS\tREQUESTED BY\tAPPROVED BY\tOUTCOME"
	if instances {
		header += "\tINSTANCE"
	}
	fmt.Fprintln(tw, header)
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s",
			e.At.UTC().Format(TimeLayout), cell(e.Conv), cell(e.Tool),
			cell(Summary(e.Args, ArgsWidth)), cell(string(e.RequestedBy)),
			cell(string(e.ApprovedBy)), cell(e.Outcome))
		if instances {
			fmt.Fprintf(tw, "\t%s", cell(e.Instance))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("audit: write table: %w", err)
	}
	return nil
}

// cell makes s safe for one table cell: one line, no control characters,
// "-" when empty.
func cell(s string) string {
	s = oneLine(s)
	if s == "" {
		return "-"
	}
	return s
}
