package auditfmt

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gatehouse-bot/gatehouse/store"
)

// UsageDay is the JSON form of one day's usage (`bot audit -usage
// -json`). The field names are part of that contract: add, never rename.
type UsageDay struct {
	Day              string   `json:"day"` // UTC, YYYY-MM-DD
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	TotalTokens      int      `json:"total_tokens"`
	USD              *float64 `json:"usd,omitempty"` // only when usage is priced
}

// WriteUsage writes each day's token usage, in the order given, as a table
// (day, prompt, completion, total, and with withUSD the cost recorded with
// the usage) or, with asJSON, as a JSON array of UsageDay ("[]" when
// empty).
func WriteUsage(w io.Writer, days []store.DayUsage, withUSD bool, asJSON bool) error {
	out := make([]UsageDay, len(days))
	for i, d := range days {
		u := d.Usage
		out[i] = UsageDay{Day: d.Day, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
			TotalTokens: u.PromptTokens + u.CompletionTokens}
		if withUSD {
			c := u.SummedCost()
			out[i].USD = &c
		}
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fmt.Errorf("audit: write usage json: %w", err)
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := "DAY (UTC)\tPROMPT\tCOMPLETION\tTOTAL\t"
	if withUSD {
		head += "USD\t"
	}
	fmt.Fprintln(tw, head)
	for _, d := range out {
		line := fmt.Sprintf("%s\t%d\t%d\t%d\t", d.Day, d.PromptTokens, d.CompletionTokens, d.TotalTokens)
		if d.USD != nil {
			line += fmt.Sprintf("%.4f\t", *d.USD)
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("audit: write usage table: %w", err)
	}
	return nil
}
