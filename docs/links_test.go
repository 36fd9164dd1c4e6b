package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// pages returns the Markdown files whose links are checked: those at the
// module's root (README.md, ARCHITECTURE.md) and in docs/, as paths
// relative to this directory.
func pages(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{"../*.md", "*.md"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 3 {
		t.Fatalf("found only %v", out)
	}
	return out
}

var (
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	heading    = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	mdLink     = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// link is one link of a page, at a line.
type link struct {
	line   int
	target string
}

// prose returns the page's lines outside code blocks, with inline code
// removed (a link in code is an example, not a link); the line numbers
// are kept (a line in a code block is empty).
func prose(text string) []string {
	lines := strings.Split(text, "\n")
	out := make([]string, len(lines))
	inFence := ""
	for i, l := range lines {
		if m := fence.FindStringSubmatch(l); m != nil {
			switch {
			case inFence == "":
				inFence = m[1]
			case inFence == m[1]:
				inFence = ""
			}
			continue
		}
		if inFence != "" {
			continue
		}
		out[i] = stripCode(l)
	}
	return out
}

// stripCode removes the code spans of a line.
func stripCode(l string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(l, '`')
		if i < 0 {
			return b.String() + l
		}
		n := len(l[i:]) - len(strings.TrimLeft(l[i:], "`"))
		ticks := l[i : i+n]
		rest := l[i+n:]
		j := strings.Index(rest, ticks)
		for j >= 0 && j+n < len(rest) && rest[j+n] == '`' {
			k := strings.Index(rest[j+n:], ticks)
			if k < 0 {
				j = -1
				break
			}
			j += n + k
		}
		if j < 0 {
			return b.String() + l // an unclosed span is text
		}
		b.WriteString(l[:i])
		b.WriteString(" ")
		l = rest[j+n:]
	}
}

// links returns every link of a page.
func links(text string) []link {
	var out []link
	for i, l := range prose(text) {
		for _, m := range inlineLink.FindAllStringSubmatch(l, -1) {
			out = append(out, link{i + 1, m[1]})
		}
		if m := refLink.FindStringSubmatch(l); m != nil {
			out = append(out, link{i + 1, m[1]})
		}
	}
	return out
}

// slug is GitHub's anchor for a heading's text: lower case, letters,
// digits, marks, '-' and '_' kept, spaces made '-', everything else
// (punctuation, backticks, emoji) dropped.
func slug(text string) string {
	text = mdLink.ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns a page's anchors: each heading's slug (a repeated one
// numbered -1, -2, … as GitHub does) and explicit <a name> or id anchors.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose(text) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
	}
	inFence := ""
	for _, l := range strings.Split(text, "\n") {
		if m := fence.FindStringSubmatch(l); m != nil {
			switch {
			case inFence == "":
				inFence = m[1]
			case inFence == m[1]:
				inFence = ""
			}
			continue
		}
		if inFence != "" {
			continue
		}
		if m := heading.FindStringSubmatch(l); m != nil {
			s := slug(m[2])
			if n := seen[s]; n > 0 {
				out[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				out[s] = true
			}
			seen[s]++
		}
	}
	return out
}

// brokenLinks returns a message for every relative link of the page at
// path whose file or #anchor does not resolve.
func brokenLinks(path, text string) []string {
	var out []string
	for _, l := range links(text) {
		target := l.target
		if strings.HasPrefix(target, "//") || regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`).MatchString(target) {
			continue // another site: not ours to check offline
		}
		file, anchor, _ := strings.Cut(target, "#")
		file, _, _ = strings.Cut(file, "?")
		dest := path
		if file != "" {
			dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
		}
		info, err := os.Stat(dest)
		if err != nil {
			out = append(out, fmt.Sprintf("%s:%d: %s: no such file %s", path, l.line, target, dest))
			continue
		}
		if anchor == "" {
			continue
		}
		if info.IsDir() || !strings.HasSuffix(dest, ".md") {
			out = append(out, fmt.Sprintf("%s:%d: %s: an anchor into %s, which is not a Markdown page", path, l.line, target, dest))
			continue
		}
		b, err := os.ReadFile(dest)
		if err != nil {
			out = append(out, fmt.Sprintf("%s:%d: %s: %v", path, l.line, target, err))
			continue
		}
		if !anchors(string(b))[anchor] {
			out = append(out, fmt.Sprintf("%s:%d: %s: %s has no heading or anchor #%s", path, l.line, target, dest, anchor))
		}
	}
	return out
}

// TestLinksResolve: every relative link of README.md, ARCHITECTURE.md and
// the pages of docs/ names a file that exists, and every #anchor a
// heading (by GitHub's rules) or an explicit anchor of the page it
// points into.
func TestLinksResolve(t *testing.T) {
	n := 0
	for _, p := range pages(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n += len(links(string(b)))
		for _, msg := range brokenLinks(p, string(b)) {
			t.Error(msg)
		}
	}
	if n < 100 {
		t.Errorf("found only %d links: the parser is broken", n)
	}
}

// TestReadmeIsAFrontDoor: README.md starts a newcomer with exactly the
// two commands (run the bot with no keys, run every test), stays at most
// 300 lines, and links to every page of docs/.
func TestReadmeIsAFrontDoor(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("README.md has %d lines; at most 300 (the details go to docs/)", n)
	}
	start := "# gatehouse\n\n```sh\ngo run ./cmd/bot          # run the bot: console chat + offline demo model, no keys needed\ngo test -race ./...       # run every test\n```\n"
	if !strings.HasPrefix(readme, start) {
		t.Errorf("README.md does not start with its title and the two commands; want\n%s", start)
	}
	var linked []string
	for _, l := range links(readme) {
		file, _, _ := strings.Cut(l.target, "#")
		if strings.HasPrefix(file, "docs/") {
			linked = append(linked, strings.TrimPrefix(file, "docs/"))
		}
	}
	all, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range all {
		if !slices.Contains(linked, page) {
			t.Errorf("README.md does not link to docs/%s", page)
		}
	}
}

// TestSlug: anchors as GitHub makes them.
func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"First run: `bot init`":                    "first-run-bot-init",
		"The shell sandbox (`tools.sandbox`)":      "the-shell-sandbox-toolssandbox",
		"Receivers and `store.lease_ttl`":          "receivers-and-storelease_ttl",
		"By hand: two `bot run`s":                  "by-hand-two-bot-runs",
		"Sending files back: `send_file`":          "sending-files-back-send_file",
		"`gateways.telegram`":                      "gatewaystelegram",
		"See [Approvals](approvals.md) — in short": "see-approvals--in-short",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}
