package slack

import (
	"regexp"
	"strings"
	"testing"
)

func TestToMrkdwn(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"a & b < c > d", "a &amp; b &lt; c &gt; d"},
		{"It is **noon** in UTC.", "It is *noon* in UTC."},
		{"__bold__ and *italic* and ~~gone~~", "*bold* and _italic_ and ~gone~"},
		{"see [the docs](https://example.com/a?b=1&c=2)", "see <https://example.com/a?b=1&amp;c=2|the docs>"},
		{"[x](javascript:alert(1))", "[x](javascript:alert(1))"},
		{"[ping](!channel)", "[ping](!channel)"},
		{"<!channel> hello", "&lt;!channel&gt; hello"},
		{"@channel and @here stay text", "@channel and @here stay text"},
		{"# Title", "*Title*"},
		{"- one\n* two", "• one\n• two"},
		{"use `a **b** <c>` here", "use `a **b** &lt;c&gt;` here"},
		{"```go\nif a < b && **x** {\n```", "```\nif a &lt; b &amp;&amp; **x** {\n```"},
		{"2 * 3 * 4", "2 * 3 * 4"},
		{"[a|b](https://x.y/p|q)", "<https://x.y/p%7Cq|a¦b>"},
		{"[a](HTTPS://X.y/P) [m](mAilto:a@B)", "<https://X.y/P|a> <mailto:a@B|m>"},
	}
	for _, c := range cases {
		if got := toMrkdwn(c.in); got != c.want {
			t.Errorf("toMrkdwn(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// ourLink is the only markup toMrkdwn may emit: a web or mail link.
var ourLink = regexp.MustCompile(`<(?:https?://|mailto:)[^<>|]*\|[^<>]*>`)

// FuzzToMrkdwn checks that whatever the model writes, the result holds no
// Slack markup but web links (no <!channel>, no <@U…>), every & starts one
// of the three escapes, and escapedLen measures escapeMrkdwn.
func FuzzToMrkdwn(f *testing.F) {
	for _, s := range []string{"**b** [t](https://u) <!here> & `c`", "```\n<x>\n```", "[a](mailto:x@y) <@U1>", "&amp;", "# h\n- i"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := toMrkdwn(s)
		rest := ourLink.ReplaceAllString(out, "")
		if strings.ContainsAny(rest, "<>") {
			t.Fatalf("toMrkdwn(%q) = %q: markup outside a link", s, out)
		}
		for i := range len(out) {
			if out[i] == '&' && !strings.HasPrefix(out[i:], "&amp;") && !strings.HasPrefix(out[i:], "&lt;") && !strings.HasPrefix(out[i:], "&gt;") {
				t.Fatalf("toMrkdwn(%q) = %q: a bare & at %d", s, out, i)
			}
		}
		if n, want := escapedLen(s), len([]rune(escapeMrkdwn(s))); n != want {
			t.Fatalf("escapedLen(%q) = %d, want %d", s, n, want)
		}
	})
}
