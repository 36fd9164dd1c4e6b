package gateways

import (
	"strings"
	"unicode/utf8"
)

// The kinds of cut, best first. Split takes the last cut of the best kind
// that fits.
const (
	levelParagraph = iota // a blank line ends, or a code block starts or ends
	levelLine             // a line ends, outside a code block
	levelWord             // after spaces, outside a code block
	levelCodeLine         // a line ends inside a code block
	levelCodeWord         // after spaces inside a code block
	levelRune             // between any two runes
	levels
)

// cut is where a chunk ends: a byte offset, and the splittable code block
// the offset falls in (nil outside one).
type cut struct {
	at     int
	inside *fence
}

// lineInfo classifies the line that starts at a position.
type lineInfo struct {
	blank  bool
	opener *fence // the block this line opens
	closes bool   // the line closes the current block
}

// cutScanner walks text rune by rune, keeping track of code blocks.
type cutScanner struct {
	limit   int
	measure func(string) int

	code       *fence // the block at the current position, nil outside
	splittable bool   // code may be closed and reopened
	line       lineInfo
	prevLine   lineInfo
	justOpened bool // the current line is the first one inside code
}

// findCut returns the best cut of text whose measure, with the fence closer
// a cut inside code needs, is at most budget. open is the splittable block
// text starts inside.
func findCut(text string, budget, limit int, open *fence, measure func(string) int) cut {
	sc := &cutScanner{limit: limit, measure: measure, code: open, splittable: open != nil}
	var best [levels]*cut
	m := 0
	for i := 0; i < len(text); {
		if i == 0 || text[i-1] == '\n' {
			sc.startLine(text, i)
		}
		if i > 0 && m <= budget {
			if lvl, c, ok := sc.candidate(text, i); ok && m+sc.closeCost(c, text[:i]) <= budget {
				best[lvl] = &c
			}
		}
		if m > budget {
			break
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		m += measure(text[i : i+size])
		i += size
	}
	for _, c := range best {
		if c != nil {
			return *c
		}
	}
	// Not even one rune fits: it becomes a chunk by itself.
	_, size := utf8.DecodeRuneInString(text)
	return cut{at: size}
}

func (sc *cutScanner) closeCost(c cut, body string) int {
	if c.inside == nil {
		return 0
	}
	return sc.measure(c.inside.closer(body))
}

// startLine updates the code block state for the line starting at i.
func (sc *cutScanner) startLine(text string, i int) {
	if i > 0 {
		sc.finishLine()
	}
	end := strings.IndexByte(text[i:], '\n')
	if end < 0 {
		end = len(text) - i
	}
	line := text[i : i+end]
	sc.prevLine = sc.line
	sc.line = lineInfo{blank: strings.TrimSpace(line) == ""}
	if sc.code == nil {
		sc.line.opener = openerOf(line)
	} else {
		sc.line.closes = closesFence(line, sc.code)
	}
}

// finishLine applies the effect of the line that just ended.
func (sc *cutScanner) finishLine() {
	sc.justOpened = false
	switch {
	case sc.line.opener != nil:
		sc.code = sc.line.opener
		sc.splittable = sc.fits(sc.code)
		sc.justOpened = true
	case sc.line.closes:
		sc.code, sc.splittable = nil, false
	}
}

// fits reports whether closing and reopening f leaves room for content.
func (sc *cutScanner) fits(f *fence) bool {
	overhead := sc.measure(f.header()) + sc.measure("\n"+f.ticks)
	return 2*overhead <= sc.limit
}

// candidate classifies a cut at i (0 < i < len(text)).
func (sc *cutScanner) candidate(text string, i int) (int, cut, bool) {
	inCode := sc.code != nil && sc.splittable
	c := cut{at: i}
	if inCode {
		c.inside = sc.code
	}
	fenceLine := sc.line.opener != nil || sc.line.closes
	switch {
	case text[i-1] == '\n':
		return sc.lineCandidate(c, inCode)
	case fenceLine:
		return levelRune, c, true
	case isSpace(text[i-1]) && !isSpace(text[i]) && text[i] != '\n':
		if inCode {
			return levelCodeWord, c, true
		}
		return levelWord, c, true
	}
	return levelRune, c, true
}

// lineCandidate classifies a cut at the start of a line.
func (sc *cutScanner) lineCandidate(c cut, inCode bool) (int, cut, bool) {
	switch {
	case inCode && sc.justOpened:
		return 0, c, false // an empty code block helps nobody
	case inCode:
		return levelCodeLine, c, true
	case sc.code != nil: // inside a block too big to reopen: plain text
		return levelLine, c, true
	case sc.prevLine.closes || sc.line.opener != nil:
		return levelParagraph, c, true
	case sc.prevLine.blank && !sc.line.blank:
		return levelParagraph, c, true
	}
	return levelLine, c, true
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' }

// openerOf returns the block a line opens ("```go"), or nil.
func openerOf(line string) *fence {
	rest, ok := FenceLine(line)
	if !ok {
		return nil
	}
	n := len(rest) - len(strings.TrimLeft(rest, "`"))
	info := rest[n:]
	if strings.Contains(info, "`") {
		return nil
	}
	f := &fence{ticks: rest[:n]}
	if fields := strings.Fields(info); len(fields) > 0 {
		f.lang = fields[0]
	}
	return f
}

// closesFence reports whether line closes the block f.
func closesFence(line string, f *fence) bool {
	rest, ok := FenceLine(line)
	if !ok {
		return false
	}
	n := len(rest) - len(strings.TrimLeft(rest, "`"))
	return n >= len(f.ticks) && strings.TrimSpace(rest[n:]) == ""
}

// FenceLine reports whether line can open or close a fenced code block:
// at most three spaces of indent (with four it is text, as in CommonMark),
// then at least three backticks. It returns the line without its indent.
// Split and the adapters' Markdown renderers share it, so that they agree
// on where code blocks are.
func FenceLine(line string) (string, bool) {
	for k := 0; k < 3 && strings.HasPrefix(line, " "); k++ {
		line = line[1:]
	}
	return line, strings.HasPrefix(line, "```")
}
