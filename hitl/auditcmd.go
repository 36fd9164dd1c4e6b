package hitl

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// The bounds of /audit: rows of a conversation shown unless asked
// otherwise, and at most; rows of one request shown at most (refusals
// of a stranger's attempts are rows too, so a request's are bounded).
const (
	DefaultAuditRows = 10
	MaxAuditRows     = 50
	maxRequestRows   = 100
	maxDetailRunes   = 120
)

// takeAuditArg reads the optional argument of /audit: a number of rows
// (1 to MaxAuditRows; shorter than a token, so never one) or a token.
func (c *Command) takeAuditArg(rest string) string {
	word, after := cutField(rest)
	if word == "" {
		c.Rows = DefaultAuditRows
		return ""
	}
	if len(word) < TokenLength {
		if n, err := strconv.Atoi(word); err == nil {
			if n < 1 || n > MaxAuditRows {
				c.Problem = fmt.Sprintf("%d rows: from 1 to %d", n, MaxAuditRows)
				return ""
			}
			c.Rows = n
			return after
		}
	}
	return c.takeToken(rest)
}

// auditText answers /audit: the conversation's newest rows, or every row
// of the request cmd.Token names, oldest first. /audit answers
// approvers, never the LLM: tokens may appear; everything the rows quote
// that came from a model, a tool or a person is shown escaped in code.
func (b *Broker) auditText(ctx context.Context, conv core.Conversation, cmd Command) string {
	f := record.AuditFilter{Conv: conv.Key(), Limit: cmd.Rows}
	head := fmt.Sprintf("Audit of this conversation, the last %d rows (oldest first; times UTC):", cmd.Rows)
	if cmd.Token != "" {
		f = record.AuditFilter{Token: cmd.Token, Limit: maxRequestRows}
		head = fmt.Sprintf("Audit of request %s (oldest first; times UTC):", cmd.Token)
	}
	rows, err := b.o.Audit.QueryAudit(ctx, f)
	if err != nil {
		b.log.Error().Err(err).Msg("hitl: could not read the audit log")
		return "Could not read the audit log (storage error)."
	}
	if len(rows) == 0 {
		if cmd.Token != "" {
			return fmt.Sprintf("No audit rows for request %s (a request from before the audit named its token has none).", cmd.Token)
		}
		return "No audit rows for this conversation yet."
	}
	if cmd.Token != "" && len(rows) == maxRequestRows {
		head = fmt.Sprintf("Audit of request %s, its last %d rows (oldest first; times UTC):", cmd.Token, maxRequestRows)
	}
	lines := []string{head}
	for _, e := range rows {
		lines = append(lines, auditLine(e, cmd.Token == ""))
	}
	return strings.Join(lines, "\n")
}

// auditLine renders one audit row on one line: when, what became of it,
// the call, who asked and where, who decided and on which gateway, the
// request's token (withToken) and the detail.
func auditLine(e record.AuditEntry, withToken bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "• %s %s — %s", e.At.UTC().Format("2006-01-02 15:04:05"), auditWord(e.Outcome), auditWord(e.Tool))
	if e.Args != "" {
		b.WriteString(" " + codeSpan(summarize(llm.ToolCall{Name: e.Tool, Args: e.Args})))
	}
	if e.RequestedBy != "" {
		fmt.Fprintf(&b, " — asked by %s in %s", auditWord(string(e.RequestedBy)), auditWord(e.Conv))
	}
	if e.ApprovedBy != "" {
		fmt.Fprintf(&b, " — by %s on %s", auditWord(string(e.ApprovedBy)), auditWord(e.ApprovedBy.Gateway()))
	}
	if withToken && e.Token != "" {
		b.WriteString(" — " + e.Token)
	}
	if e.Detail != "" {
		b.WriteString(" — " + codeSpan(clip(textutil.GraphicLine(e.Detail), maxDetailRunes)))
	}
	return b.String()
}

// auditWord shows a stored word (an outcome, an identity, a conversation
// key) that should be plain: as it is when it is, else escaped in code.
func auditWord(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(":-._@/", r)) {
			return codeSpan(clip(textutil.GraphicLine(s), maxSummaryRunes))
		}
	}
	if s == "" {
		return "-"
	}
	return s
}
