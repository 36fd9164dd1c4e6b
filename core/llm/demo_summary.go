package llm

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// gatehouseNote starts the notes the core writes for the LLM about
// approval outcomes.
const gatehouseNote = "[gatehouse]"

// maxShown bounds how much of a tool's output the demo repeats.
const maxShown = 3000

// resultKind is what a tool result reports.
type resultKind uint8

const (
	resultOK resultKind = iota
	resultHeld
	resultDenied
	resultError
)

// summariseResults summarises the tool messages that end the conversation
// (up to index last), in order.
func summariseResults(msgs []Message, last int) string {
	first := last
	for first > 0 && msgs[first-1].Role == RoleTool {
		first--
	}
	parts := make([]string, 0, last-first+1)
	for _, m := range msgs[first : last+1] {
		parts = append(parts, summariseResult(findCall(msgs[:first], m.ToolCallID), m.Content))
	}
	return strings.Join(parts, "\n\n")
}

// findCall returns the assistant's call with the id, or a call named
// "tool" when there is none.
func findCall(msgs []Message, id string) ToolCall {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, c := range msgs[i].ToolCalls {
			if c.ID == id {
				return c
			}
		}
	}
	return ToolCall{ID: id, Name: "tool"}
}

func summariseResult(call ToolCall, out string) string {
	out = strings.TrimSpace(out)
	first, _, _ := strings.Cut(out, "\n")
	switch classifyResult(first) {
	case resultHeld:
		return fmt.Sprintf("The `%s` call needs a human's approval and has not run yet; "+
			"the approvers were asked, and I will report back once they decide.", call.Name)
	case resultDenied:
		return fmt.Sprintf("The `%s` call was refused and did not run: %s", call.Name, refusalReason(out))
	case resultError:
		return fmt.Sprintf("The `%s` call failed:\n%s", call.Name, fence(out))
	}
	return summariseOK(call, out)
}

// classifyResult reads the first line of a tool result. The core reports
// failures as "error: …", gate refusals as "refused: …", and held calls with
// a text about approval.
func classifyResult(first string) resultKind {
	l := strings.ToLower(strings.TrimLeft(first, "[(*_ "))
	switch {
	case hasPrefix(l, "error", "failed", "timed out", "tool crashed", "unknown tool", "invalid arguments"):
		return resultError
	case hasPrefix(l, "refused", "denied", "rejected", "blocked", "not allowed"):
		return resultDenied
	case strings.Contains(l, "approval"), hasPrefix(l, "held", "awaiting", "pending"):
		return resultHeld
	}
	return resultOK
}

func hasPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func summariseOK(call ToolCall, out string) string {
	var a struct{ Command, Path, URL string }
	_ = json.Unmarshal([]byte(call.Args), &a) // best effort: missing fields stay empty
	switch call.Name {
	case "current_time":
		return "The time is " + out + "."
	case "read_file":
		if out == "" {
			return fmt.Sprintf("%s is empty.", orDefault(a.Path, "The file"))
		}
		return fmt.Sprintf("Here is %s:\n%s", orDefault(a.Path, "the file"), fence(out))
	case "list_dir":
		return fmt.Sprintf("Files in %s:\n%s", orDefault(a.Path, "."), fence(out))
	case "write_file":
		return "Done: " + orDefault(out, "written to "+a.Path+".")
	case "shell":
		return summariseShell(a.Command, out)
	case "http_get":
		return fmt.Sprintf("Fetched %s:\n%s", orDefault(a.URL, "the page"), fence(out))
	}
	return fmt.Sprintf("The `%s` tool returned:\n%s", call.Name, fence(out))
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// fence wraps text in a code fence longer than any backtick run inside it,
// shortened to maxShown bytes.
func fence(text string) string {
	text = textutil.Shorten(text, maxShown)
	ticks := "```"
	for strings.Contains(text, ticks) {
		ticks += "`"
	}
	return ticks + "\n" + text + "\n" + ticks
}

// summariseShell reads the shell tool's report: "exit N", then the
// output streams.
func summariseShell(command, out string) string {
	status, rest, _ := strings.Cut(out, "\n")
	code, ok := strings.CutPrefix(status, "exit ")
	if !ok {
		rest, code = out, "0"
	}
	rest = strings.TrimSpace(rest)
	switch {
	case code != "0" && rest == "":
		return fmt.Sprintf("`%s` failed (exit %s) with no output.", command, code)
	case code != "0":
		return fmt.Sprintf("`%s` failed (exit %s):\n%s", command, code, fence(rest))
	case rest == "":
		return fmt.Sprintf("`%s` ran with no output.", command)
	}
	return fmt.Sprintf("Output of `%s`:\n%s", command, fence(rest))
}

// summariseOutcome tells the user what became of a held action (or of a
// refused reply), from the core's note without its "[gatehouse]" prefix:
// a headline, the note's first line without its instructions to the
// model, and the output that follows it.
func summariseOutcome(note string) string {
	head, output, _ := strings.Cut(strings.TrimSpace(note), "\n")
	head = stripInstructions(head)
	if _, reason, ok := strings.Cut(head, "reply was not sent:"); ok {
		return "My previous reply could not be sent: " + strings.TrimSpace(reason)
	}
	var b strings.Builder
	b.WriteString(outcomeHeadline(strings.ToLower(head)))
	if head != "" {
		b.WriteString("\n" + head)
	}
	if output = strings.TrimSpace(output); output != "" {
		b.WriteString("\n" + fence(output))
	}
	return b.String()
}

func outcomeHeadline(l string) string {
	switch {
	case strings.Contains(l, "denied"):
		return "An approver denied the request, so it did not run."
	case strings.Contains(l, "expired"), strings.Contains(l, "not approved in time"):
		return "The approval request expired, so the action did not run."
	case strings.Contains(l, "stopped while it was running"), strings.Contains(l, "interrupted"):
		return "The action was interrupted by a restart; it was not run again."
	case strings.Contains(l, "not run"), strings.Contains(l, "not be run"), strings.Contains(l, "failed"):
		return "The request was approved, but the action did not succeed."
	case strings.Contains(l, "approved"):
		return "The request was approved and the action ran."
	}
	return "Update on a held action:"
}

// refusalReason is a refusal's reason without its "refused:" prefix and
// its instructions to the model.
func refusalReason(out string) string {
	_, reason, ok := strings.Cut(out, ":")
	if !ok {
		reason = out
	}
	return stripInstructions(reason)
}

// stripInstructions drops the sentences the core addresses to the model
// ("Tell the user; …", "Stop proposing this; …") and ends the rest with a
// full stop unless it introduces what follows (":").
func stripInstructions(s string) string {
	l := strings.ToLower(s)
	for _, marker := range []string{"tell the user", "stop proposing", "do not retry"} {
		if i := strings.Index(l, marker); i >= 0 {
			s, l = s[:i], l[:i]
		}
	}
	s = strings.TrimRight(strings.TrimSpace(s), " ;,.")
	if s == "" || strings.HasSuffix(s, ":") {
		return s
	}
	return s + "."
}
