package hitl

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// heldText is the tool result the LLM sees for a held call. It never
// contains the token: the LLM must not be able to approve.
const heldText = "This action needs human approval; a request was sent to the approvers. " +
	"Do not retry it; tell the user it awaits approval. " +
	"What becomes of it will arrive later as a [gatehouse] message."

// replyHint is the line that tells how to answer the request with token
// by typed command. It goes out as core.ApprovalPrompt.Hint, not in the
// request text: gateways show it while the request is open and leave it
// out of a resolved request they update in place.
func replyHint(token string) string {
	return fmt.Sprintf("Reply /approve %[1]s or /deny %[1]s [reason]; /approve %[1]s always also allows exactly this call, while the files it names stay as they are", token) + grantHint(token)
}

// grantHint ends a reply hint with the typed grant.
func grantHint(token string) string {
	return fmt.Sprintf("; /approve %s for 30m, for 30 min in the conversation that asked.", token)
}

// requestText is the approval request people see, written by the broker,
// without the reply hint; r is the call as rendered for the conversation,
// state what became of its file there; note, when set, is a line saying
// why the call is held again.
func requestText(a record.Approval, now time.Time, note string, r rendered, state attachState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Approval needed: %s", a.Call.Name)
	switch {
	case r.shortened && state == attachSent:
		fmt.Fprintf(&b, " (shortened: the whole call is attached, %s)", r.file.Name)
	case r.shortened && state == attachFailed:
		fmt.Fprintf(&b, " (shortened: the whole call could not be attached; /show %s prints it)", a.Token)
	}
	b.WriteString("\n")
	if r.body != "" {
		b.WriteString(r.body + "\n")
	}
	if r.hidden {
		fmt.Fprintf(&b, "⚠ contains invisible or bidi characters — /show %s shows it escaped\n", a.Token)
	}
	fmt.Fprintf(&b, "Asked in %s by %s", a.Conv.Key(), a.RequestedBy)
	if rule := ruleText(a); rule != "" {
		b.WriteString("; held by " + rule)
	}
	b.WriteString(".\n")
	if note != "" {
		b.WriteString("⚠ " + note + "\n")
	}
	fmt.Fprintf(&b, "Expires in %s (%s).", humanDuration(a.Expires.Sub(now)), clockTime(a.Expires))
	if r.shortened {
		fmt.Fprintf(&b, "\n(Shortened: /show %s prints the full action.)", a.Token)
	}
	return b.String()
}

// ruleText renders the rule and reason that held the call.
func ruleText(a record.Approval) string {
	switch {
	case a.Rule != "" && a.Reason != "":
		return fmt.Sprintf("rule %s (%s)", a.Rule, a.Reason)
	case a.Rule != "":
		return "rule " + a.Rule
	}
	return a.Reason
}

// showText is the full action for /show; change, when set, is what a
// pending write_file call will change (writeChange).
func showText(a record.Approval, now time.Time, change string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Request %s: %s\ntool: %s\narguments:\n%s\n", a.Token, statusText(a, now), a.Call.Name, codeBlock(prettyArgs(a.Call.Args)+"\n"))
	if change != "" {
		b.WriteString(change + "\n")
	}
	fmt.Fprintf(&b, "asked in %s by %s at %s", a.Conv.Key(), a.RequestedBy, a.Created.UTC().Format(time.DateTime+" UTC"))
	if rule := ruleText(a); rule != "" {
		b.WriteString("\nheld by " + rule)
	}
	if a.Note != "" {
		b.WriteString("\nnote: " + clip(a.Note, maxOutputRunes))
	}
	return b.String()
}

// writeChange is what /show adds for a write_file call: its whole diff
// against the file as it is now ("" for any other call, a new file, whose
// content is in the arguments, or a file too large to diff).
func writeChange(h heldCall) string {
	p := h.preview
	if !h.diffed || p.New || !p.Diffed {
		return ""
	}
	diff := textutil.Graphic(p.Diff.Hunks)
	if diff == "" {
		diff = "(no change)"
	}
	return "change, against the file as it is now: " + p.headline() + "\n" + codeBlock(diff+"\n")
}

// statusText describes where an approval is, for people.
func statusText(a record.Approval, now time.Time) string {
	switch {
	case a.Status == record.StatusPending && now.Before(a.Expires):
		return fmt.Sprintf("pending, expires in %s", humanDuration(a.Expires.Sub(now)))
	case a.Status == record.StatusPending:
		return "expired"
	case a.ResolvedBy != "":
		return fmt.Sprintf("%s (resolved by %s)", a.Status, a.ResolvedBy)
	}
	return string(a.Status)
}

// pendingLine is one /pending entry.
func pendingLine(a record.Approval, now time.Time, selfOnlyDeny bool) string {
	line := fmt.Sprintf("• %s — %s %s — asked in %s by %s, %s, expires in %s",
		a.Token, a.Call.Name, codeSpan(summarize(a.Call)), a.Conv.Key(), a.RequestedBy, nudgedText(a, now), humanDuration(a.Expires.Sub(now)))
	if selfOnlyDeny {
		line += " (your own request: you may deny it; another approver must approve it)"
	}
	return line
}

// callRef names a call for people: "shell `ls -la`".
func callRef(a record.Approval) string {
	return a.Call.Name + " " + codeSpan(summarize(a.Call))
}

// runNotice tells people what became of an approved call.
func runNotice(a record.Approval, res core.Result, runErr error) string {
	head := fmt.Sprintf("Approved by %s: %s (request %s)", a.ResolvedBy, callRef(a), a.Token)
	switch {
	case errors.Is(runErr, errRunCancelled):
		return head + " was cancelled (/cancel) while it ran; it may have done part of its work." + outputBlock(res.Output)
	case errors.Is(runErr, errRunStopped):
		return head + " was stopped by shutdown while it ran; it may have done part of its work." + outputBlock(res.Output)
	case errors.Is(runErr, errRunFenced):
		return head + " was stopped while it ran: the instance running it lost the database; it may have done part of its work; not run again." + outputBlock(res.Output)
	case runErr != nil:
		return head + " could not be run: " + runErr.Error()
	case res.Failed:
		return head + " ran and failed." + outputBlock(res.Output)
	}
	return head + " ran." + outputBlock(res.Output)
}

// outputBlock quotes tool output for people, shortened, its control
// characters made visible.
func outputBlock(out string) string {
	if strings.TrimSpace(out) == "" {
		return ""
	}
	return "\n" + codeBlock(textutil.Visible(clip(out, maxOutputRunes))+"\n")
}

// denyNotice tells people a request was denied.
func denyNotice(a record.Approval) string {
	s := fmt.Sprintf("Denied by %s: %s (request %s) will not run.", a.ResolvedBy, callRef(a), a.Token)
	if a.Note != "" {
		s += " Reason: " + a.Note
	}
	return s
}

// expiredNotice tells people a request expired.
func expiredNotice(a record.Approval) string {
	return fmt.Sprintf("Expired: nobody approved %s in %s (request %s); it did not run.", callRef(a), waited(a.Expires.Sub(a.Created)), a.Token)
}

// interruptedNotice tells people a run was cut by a restart.
func interruptedNotice(a record.Approval) string {
	return fmt.Sprintf("Interrupted: %s (request %s, approved by %s) was running when the bot stopped; it was not run again and its result is unknown.",
		callRef(a), a.Token, a.ResolvedBy)
}

// mismatchNotice tells people an approved call was refused because it no
// longer matched what was approved.
func mismatchNotice(a record.Approval) string {
	return fmt.Sprintf("Refused: %s (request %s) was approved by %s but did not run: the stored action no longer matches what was approved.",
		callRef(a), a.Token, a.ResolvedBy)
}

// fileChangedNotice tells people an approved write_file call was refused
// because its file changed since the request showed the diff.
func fileChangedNotice(a record.Approval) string {
	return fmt.Sprintf("Refused: %s (request %s) was approved by %s but did not run: its file changed since the request showed the diff, so what was approved is not what would run. Ask again to see the new diff.",
		callRef(a), a.Token, a.ResolvedBy)
}

// llmCall names a held call for the LLM, with its arguments (no token).
func llmCall(a record.Approval) string {
	return fmt.Sprintf("The held %s call with arguments %s", a.Call.Name, clip(a.Call.Args, maxArgsForLLM))
}

// llmRan is the outcome signal text of an approved call.
func llmRan(a record.Approval, res core.Result, runErr error) string {
	head := "[gatehouse] " + llmCall(a) + " was approved by " + string(a.ResolvedBy)
	switch {
	case errors.Is(runErr, errRunCancelled):
		return head + " but a person cancelled it (/cancel) while it ran; it may have done part of its work. Its output:\n" + orNone(res.Output)
	case errors.Is(runErr, errRunStopped):
		return head + " but the bot was shutting down and stopped it while it ran; it may have done part of its work. Its output:\n" + orNone(res.Output)
	case errors.Is(runErr, errRunFenced):
		return head + " but the bot lost its database and stopped it while it ran; it may have done part of its work. It was not run again. Its output:\n" + orNone(res.Output)
	case runErr != nil:
		return head + " but could not be run: " + runErr.Error()
	case res.Failed:
		return head + " and ran, but failed; its output:\n" + orNone(res.Output)
	}
	return head + " and ran; its result:\n" + orNone(res.Output)
}

// orNone marks empty tool output, so the LLM does not wait for more.
func orNone(out string) string {
	if strings.TrimSpace(out) == "" {
		return "(no output)"
	}
	return out
}

// llmDenied is the outcome signal text of a denied call.
func llmDenied(a record.Approval) string {
	reason := "no reason given"
	if a.Note != "" {
		reason = a.Note
	}
	return fmt.Sprintf("[gatehouse] %s was denied by %s: %s; it did not run. Tell the user; do not run it again unless the user asks.",
		llmCall(a), a.ResolvedBy, reason)
}

// llmExpired is the outcome signal text of an expired request.
func llmExpired(a record.Approval) string {
	return fmt.Sprintf("[gatehouse] %s was not approved in time (the request expired after %s); it did not run. Tell the user; do not run it again unless the user asks.",
		llmCall(a), humanDuration(a.Expires.Sub(a.Created)))
}

// llmInterrupted is the outcome signal text of a run cut by a restart.
func llmInterrupted(a record.Approval) string {
	return fmt.Sprintf("[gatehouse] %s was approved by %s, but the bot stopped while it was running; it was not run again and its result is unknown. Tell the user.",
		llmCall(a), a.ResolvedBy)
}

// llmMismatch is the outcome signal text of a refused, altered action.
func llmMismatch(a record.Approval) string {
	return fmt.Sprintf("[gatehouse] %s was approved by %s but was not run: the stored action no longer matched what was approved. Tell the user.",
		llmCall(a), a.ResolvedBy)
}
