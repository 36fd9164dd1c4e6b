package hitl

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Verb is what a command asks for.
type Verb string

// The verbs the broker understands.
const (
	VerbApprove Verb = "approve" // /approve <token> [always | for <duration>]
	VerbDeny    Verb = "deny"    // /deny <token> [reason]
	VerbPending Verb = "pending" // /pending
	VerbShow    Verb = "show"    // /show <token>
	VerbRules   Verb = "rules"   // /rules: list standing allows
	VerbUnallow Verb = "unallow" // /unallow <n>: remove standing allow n
	VerbAudit   Verb = "audit"   // /audit [n | token]: this conversation's audit rows, or one request's
)

// verbs is the set of known verbs.
var verbs = map[Verb]bool{
	VerbApprove: true, VerbDeny: true, VerbPending: true,
	VerbShow: true, VerbRules: true, VerbUnallow: true, VerbAudit: true,
}

// Usage returns the one-line usage of the verb.
func (v Verb) Usage() string {
	switch v {
	case VerbApprove:
		return "usage: /approve <token> [always | for <duration from 1m to 24h, like 30m or 2h>]"
	case VerbDeny:
		return "usage: /deny <token> [reason]"
	case VerbShow:
		return "usage: /show <token>"
	case VerbUnallow:
		return "usage: /unallow <number> (the numbers are listed by /rules)"
	case VerbAudit:
		return fmt.Sprintf("usage: /audit [number of rows, 1 to %d | token]", MaxAuditRows)
	}
	return "usage: /" + string(v)
}

// Command is a parsed approval command.
type Command struct {
	Verb Verb
	// Token is the normalised token; empty when it was missing or malformed
	// (Problem then says which).
	Token string
	// Always is set by "/approve <token> always".
	Always bool
	// For is the length of the grant "/approve <token> for 30m" asks for,
	// from MinGrant to MaxGrant; zero for none.
	For time.Duration
	// Reason is the free text after the token of a /deny.
	Reason string
	// Rule is the standing allow number of an /unallow; 0 when missing.
	Rule int64
	// Rows is how many audit rows an /audit without a token asks for.
	Rows int
	// Problem is non-empty when the verb was recognised but its arguments
	// were not; the broker replies with it and the verb's Usage.
	Problem string
}

// ParseCommand recognises an approval command in a chat message. It accepts
// what real clients send: "/approve TOKEN", "/approve@BotName TOKEN"
// (group chats), a leading mention ("@bot /approve X", Slack's
// "<@U123> approve X", Discord's "<@123> /approve X"), extra spaces, any
// letter case, and a token with or without a dash ("k7q2-mx9p").
//
// A message starting with a slash or addressed to the bot by a mention is a
// command as soon as its first word is a verb, even with a missing or
// malformed argument (Problem is then set, so the broker can answer with the
// usage). Without slash or mention (Slack cannot send slash text) the whole
// message must have the exact shape of a command ("approve K7Q2MX9P",
// "pending"), so that chat like "I approve of this plan" or "approve it
// please" is never taken for one.
func ParseCommand(text string) (Command, bool) {
	rest, addressed := stripMentions(strings.TrimSpace(text))
	word, rest := cutField(rest)
	verb, slash := parseVerb(word)
	if verb == "" {
		return Command{}, false
	}
	cmd := parseArgs(verb, rest)
	if cmd.Problem != "" && !slash && !addressed {
		return Command{}, false
	}
	return cmd, true
}

// stripMentions removes leading mentions ("@bot", "<@U123>", "<@!123>",
// "<@U123|bot>", optionally followed by ':' or ',') and reports whether there
// were any.
func stripMentions(s string) (string, bool) {
	found := false
	for {
		word, rest := cutField(s)
		if !isMention(strings.TrimRight(word, ":,")) {
			return s, found
		}
		s, found = rest, true
	}
}

// isMention reports whether word is a user mention on one of the platforms.
func isMention(word string) bool {
	if strings.HasPrefix(word, "<@") && strings.HasSuffix(word, ">") {
		return len(word) > 3
	}
	return len(word) > 1 && word[0] == '@'
}

// parseVerb recognises "/approve", "/approve@BotName" and "approve" in any
// letter case; slash reports the leading slash.
func parseVerb(word string) (verb Verb, slash bool) {
	if strings.HasPrefix(word, "/") {
		word, slash = word[1:], true
		if name, _, ok := strings.Cut(word, "@"); ok {
			word = name
		}
	}
	v := Verb(strings.ToLower(word))
	if !verbs[v] {
		return "", false
	}
	return v, slash
}

// parseArgs parses the arguments of verb from rest.
func parseArgs(verb Verb, rest string) Command {
	cmd := Command{Verb: verb}
	switch verb {
	case VerbApprove:
		rest = cmd.takeToken(rest)
		word, more := cutField(rest)
		switch {
		case cmd.Token == "":
		case strings.EqualFold(word, "always"):
			cmd.Always, rest = true, more
		case strings.EqualFold(word, "for"):
			rest = cmd.takeDuration(more)
		}
		cmd.noMore(rest)
	case VerbDeny:
		cmd.Reason = strings.TrimSpace(cmd.takeToken(rest))
	case VerbShow:
		cmd.noMore(cmd.takeToken(rest))
	case VerbUnallow:
		cmd.noMore(cmd.takeRule(rest))
	case VerbAudit:
		cmd.noMore(cmd.takeAuditArg(rest))
	default:
		cmd.noMore(rest)
	}
	if cmd.Problem != "" {
		cmd.Always, cmd.Reason, cmd.For = false, "", 0
	}
	return cmd
}

// takeToken reads the token argument and returns what follows it. A token
// split by a space ("K7Q2 MX9P") is joined.
func (c *Command) takeToken(rest string) string {
	word, after := cutField(rest)
	if word == "" {
		c.Problem = "missing token"
		return ""
	}
	if tok, ok := NormalizeToken(word); ok {
		c.Token = tok
		return after
	}
	second, after2 := cutField(after)
	if tok, ok := NormalizeToken(word + second); ok && second != "" {
		c.Token = tok
		return after2
	}
	c.Problem = fmt.Sprintf("%q is not a token (tokens are %d letters and digits, like K7Q2MX9P)", clip(word, 24), TokenLength)
	return ""
}

// takeDuration reads the length of a grant ("30m", "2h", "1h30m"): from
// MinGrant to MaxGrant, else a problem that gives the range.
func (c *Command) takeDuration(rest string) string {
	word, after := cutField(rest)
	if word == "" {
		c.Problem = "missing duration after \"for\" (from 1m to 24h, like 30m or 2h)"
		return ""
	}
	d, err := time.ParseDuration(strings.ToLower(word))
	if err != nil || d < MinGrant || d > MaxGrant {
		c.Problem = fmt.Sprintf("%q is not a duration from 1m to 24h (like 30m or 2h)", clip(word, 24))
		return ""
	}
	c.For = d
	return after
}

// takeRule reads the standing allow number of /unallow ("3" or "#3").
func (c *Command) takeRule(rest string) string {
	word, after := cutField(rest)
	if word == "" {
		c.Problem = "missing rule number"
		return ""
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(word, "#"), 10, 64)
	if err != nil || n <= 0 {
		c.Problem = fmt.Sprintf("%q is not a rule number", clip(word, 24))
		return ""
	}
	c.Rule = n
	return after
}

// noMore records a problem when unexpected words are left over.
func (c *Command) noMore(rest string) {
	if c.Problem != "" {
		return
	}
	if word, _ := cutField(rest); word != "" {
		c.Problem = fmt.Sprintf("unexpected %q", clip(word, 24))
	}
}

// cutField splits s into its first whitespace-separated word and the rest
// (with leading space removed).
func cutField(s string) (word, rest string) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeftFunc(s[i:], unicode.IsSpace)
}

// clip shortens s to at most n runes, marking the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
