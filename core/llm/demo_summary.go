package llm

import (
	"encoding/json"
	"fmt"
	"strings"
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
		return fmt.Sprintf("The `%s` call needs a human's approval and has not run yet: %s", call.Name, out)
	case resultDenied:
		return fmt.Sprintf("The `%s` call was denied and did not run: %s", call.Name, out)
	case resultError:
		return fmt.Sprintf("The `%s` call failed:\n%s", call.Name, fence(out))
	}
	return summariseOK(call, out)
}

// classifyResult reads the first line of a tool result.
func classifyResult(first string) resultKind {
	l := strings.ToLower(strings.TrimLeft(first, "[(*_ "))
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.HasPrefix(l, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("held", "awaiting", "pending", "waiting for", "needs approval", "requires approval", "approval"),
		strings.Contains(l, "awaiting approval"), strings.Contains(l, "needs approval"),
		strings.Contains(l, "waiting for approval"), strings.Contains(l, "held for approval"):
		return resultHeld
	case has("denied", "refused", "rejected", "blocked", "not allowed", "forbidden"):
		return resultDenied
	case has("error", "failed", "failure", "timeout", "timed out", "exit status", "exit code"):
		return resultError
	}
	return resultOK
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
		if out == "" {
			return fmt.Sprintf("`%s` ran with no output.", a.Command)
		}
		return fmt.Sprintf("Output of `%s`:\n%s", a.Command, fence(out))
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
	text = shorten(text, maxShown)
	ticks := "```"
	for strings.Contains(text, ticks) {
		ticks += "`"
	}
	return ticks + "\n" + text + "\n" + ticks
}

// summariseOutcome tells the user what became of a held action, from the
// core's note (without its "[gatehouse]" prefix).
func summariseOutcome(note string) string {
	note = strings.TrimSpace(note)
	l := strings.ToLower(note)
	var head string
	switch {
	case strings.Contains(l, "denied"):
		head = "An approver denied the request, so it did not run."
	case strings.Contains(l, "expired"):
		head = "The approval request expired before anyone answered, so the action did not run."
	case strings.Contains(l, "interrupted"):
		head = "The action was interrupted by a restart while it ran; it will not be run again."
	case strings.Contains(l, "failed"):
		head = "The request was approved, but the action failed."
	case strings.Contains(l, "approved"), strings.Contains(l, "executed"):
		head = "The request was approved and the action has run."
	default:
		head = "Update on the held action."
	}
	if note == "" {
		return head
	}
	if strings.Contains(note, "\n") {
		return head + "\n" + fence(note)
	}
	return head + " (" + note + ")"
}
