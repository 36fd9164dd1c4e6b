package gateways

import "strings"

// UTF16Len returns the length of s in UTF-16 code units, the unit of
// limits counted in UTF-16 units. An invalid UTF-8 byte counts as one unit.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// Split cuts text into chunks whose measure is at most limit, for platforms
// that cap a message's length. It cuts at the last paragraph boundary that
// fits, else the last line boundary, else the last word boundary, else
// between two runes. It avoids cutting inside a fenced code block (```); when
// a block must be cut, the chunk closes the fence and the next chunk reopens
// it with the same language. Nothing is lost and the order is kept: the
// separators at a cut stay at the end of the earlier chunk, and apart from
// the added fences the chunks concatenate to text.
//
// measure must be additive (measure(a+b) == measure(a)+measure(b)), as len,
// utf8.RuneCountInString and UTF16Len are. If limit is smaller than one
// rune's measure, that rune is a chunk by itself. Split returns nil for "".
func Split(text string, limit int, measure func(string) int) []string {
	pieces := splitPieces(text, limit, measure)
	out := make([]string, len(pieces))
	for i, p := range pieces {
		out[i] = p.render()
	}
	return out
}

// fence is an open fenced code block: its backtick run and its language.
type fence struct {
	ticks string // "```" or longer
	lang  string
}

func (f *fence) header() string { return f.ticks + f.lang + "\n" }

// closer is what ends the block after body.
func (f *fence) closer(body string) string {
	if strings.HasSuffix(body, "\n") {
		return f.ticks
	}
	return "\n" + f.ticks
}

// piece is one chunk before rendering: the bodies of all pieces concatenate
// to the original text; reopen and close are the fences Split adds.
type piece struct {
	reopen *fence
	body   string
	close  string
}

func (p piece) render() string {
	if p.reopen == nil {
		return p.body + p.close
	}
	return p.reopen.header() + p.body + p.close
}

func splitPieces(text string, limit int, measure func(string) int) []piece {
	var out []piece
	var open *fence // the splittable block the next piece starts inside
	for text != "" {
		budget := limit
		if open != nil {
			budget -= measure(open.header())
		}
		if measure(text) <= budget {
			return append(out, piece{reopen: open, body: text})
		}
		c := findCut(text, budget, limit, open, measure)
		p := piece{reopen: open, body: text[:c.at]}
		if c.inside != nil {
			p.close = c.inside.closer(p.body)
		}
		out = append(out, p)
		text, open = text[c.at:], c.inside
	}
	return out
}
