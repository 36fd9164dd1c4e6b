package llm

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// intent is one tool call the demo model understood, before ids.
type intent struct {
	tool string
	args any
}

// Argument objects, as structs so that the JSON keys keep this order.
type (
	commandArgs struct {
		Command string `json:"command"`
	}
	pathArgs struct {
		Path string `json:"path"`
	}
	writeArgs struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	urlArgs struct {
		URL string `json:"url"`
	}
	noArgs struct{}
)

// intentRule maps a pattern to a tool call built from its submatches.
type intentRule struct {
	re    *regexp.Regexp
	build func(m []string) intent
}

func rule(pattern string, build func(m []string) intent) intentRule {
	return intentRule{re: regexp.MustCompile(`(?i)^(?:` + pattern + `)$`), build: build}
}

func pathOr(p, def string) string {
	if p == "" {
		return def
	}
	return unquote(p)
}

// grammar is the demo model's compiled patterns. They are compiled on the
// demo's first message, not at start-up: a bot with a real model never
// uses them (compiling them cost about 250 KB of heap and 0.4 ms at every
// start, for every bot).
type grammar struct {
	rules                                   []intentRule
	politePrefix, politeSuffix, intentSplit *regexp.Regexp
}

// demoGrammar compiles the grammar once.
var demoGrammar = sync.OnceValue(func() *grammar {
	return &grammar{
		rules:        demoRules(),
		politePrefix: regexp.MustCompile(`(?i)^(?:(?:please|hey|hi|ok|okay|demo|bot)[,!]?\s+|(?:can|could|would|will)\s+you\s+)+`),
		politeSuffix: regexp.MustCompile(`(?i)[\s,]+please$`),
		intentSplit:  regexp.MustCompile(`(?i)\s*;\s*|,?\s+and\s+then\s+|,?\s+then\s+|,?\s+and\s+`),
	}
})

// whatIs matches "what is" and its contractions, "what's" (with a typed
// or a typographic apostrophe) and "whats". It is part of the patterns
// rather than spelled out beforehand, which would change a command or a
// text being written too ("run `echo what's up`").
const whatIs = `what(?:\s+is|['’]?s)`

// demoRules are tried in order on the whole (normalised) message.
func demoRules() []intentRule {
	return []intentRule{
		rule(`(?:write|save|put)\s+(.+?)\s+(?:to|into|in)\s+(?:the\s+)?(?:file\s+)?(\S+)`, func(m []string) intent {
			return intent{"write_file", writeArgs{Path: unquote(m[2]), Content: unquote(m[1])}}
		}),
		rule(`(?:fetch|get|download|curl|open|visit|load)\s+(https?://\S+)`, func(m []string) intent {
			return intent{"http_get", urlArgs{URL: m[1]}}
		}),
		rule(`(?:run|execute|exec)\s+(.+)`, func(m []string) intent {
			return intent{"shell", commandArgs{Command: unquote(m[1])}}
		}),
		rule(`(?:shell|sh|bash)\s*:\s*(.+)|\$\s+(.+)`, func(m []string) intent {
			return intent{"shell", commandArgs{Command: unquote(m[1] + m[2])}}
		}),
		rule(`what\s+time\s+is\s+it(?:\s+now)?|(?:`+whatIs+`|tell\s+me)\s+the\s+(?:time|date)(?:\s+now)?|(?:the\s+|current\s+)?(?:time|date)(?:\s+now)?|what\s+day\s+is\s+it(?:\s+today)?|`+whatIs+`\s+today['’]?s\s+date|today['’]?s\s+date`, func([]string) intent {
			return intent{"current_time", noArgs{}}
		}),
		rule(`(?:list|show)(?:\s+me)?(?:\s+the|\s+all)?\s+files(?:\s+in\s+(\S+))?`, func(m []string) intent {
			return intent{"list_dir", pathArgs{Path: pathOr(m[1], ".")}}
		}),
		rule(`(?:ls|dir|list\s+(?:dir|directory|folder))(?:\s+(\S+))?`, func(m []string) intent {
			return intent{"list_dir", pathArgs{Path: pathOr(m[1], ".")}}
		}),
		rule(whatIs+`\s+in\s+(?:the\s+|my\s+)?workspace|(?:show|list)(?:\s+me)?\s+(?:the\s+|my\s+)?workspace`, func([]string) intent {
			return intent{"list_dir", pathArgs{Path: "."}}
		}),
		rule(`(?:read|cat)(?:\s+the)?(?:\s+file)?\s+(\S+)`, func(m []string) intent {
			return intent{"read_file", pathArgs{Path: unquote(m[1])}}
		}),
		rule(`(?:show|open|print|display)(?:\s+me)?(?:\s+the)?\s+file\s+(\S+)|(?:show|open|print|display)(?:\s+me)?(?:\s+the)?\s+(\S*[./]\S*)`, func(m []string) intent {
			return intent{"read_file", pathArgs{Path: unquote(m[1] + m[2])}}
		}),
	}
}

// normalise trims courtesy words and final punctuation.
func normalise(text string) string {
	g := demoGrammar()
	text = strings.TrimSpace(text)
	text = strings.TrimRight(text, ".!? ")
	text = g.politePrefix.ReplaceAllString(text, "")
	text = g.politeSuffix.ReplaceAllString(text, "")
	return strings.TrimSpace(text)
}

// parseIntents reads the tool calls a message asks for: one for the whole
// message, or one for each part of "A and B" / "A; then B" when every part
// is understood. It returns nil when the message is not a clear request.
func parseIntents(text string) []intent {
	g := demoGrammar()
	text = normalise(text)
	if in, ok := matchIntent(text); ok {
		return []intent{in}
	}
	parts := g.intentSplit.Split(text, -1)
	if len(parts) < 2 {
		return nil
	}
	out := make([]intent, 0, len(parts))
	for _, p := range parts {
		in, ok := matchIntent(normalise(p))
		if !ok {
			return nil
		}
		out = append(out, in)
	}
	return out
}

func matchIntent(text string) (intent, bool) {
	g := demoGrammar()
	for _, r := range g.rules {
		if m := r.re.FindStringSubmatch(text); m != nil {
			return r.build(m), true
		}
	}
	return intent{}, false
}

// unquote removes one pair of surrounding backticks or quotes.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 {
		first, last := s[0], s[len(s)-1]
		if first == last && (first == '`' || first == '"' || first == '\'') {
			return strings.TrimSpace(s[1 : len(s)-1])
		}
	}
	return s
}

func (in intent) call(n int) ToolCall {
	args, _ := json.Marshal(in.args) // plain structs of strings: cannot fail
	return ToolCall{ID: "demo_" + strconv.Itoa(n), Name: in.tool, Args: string(args)}
}
