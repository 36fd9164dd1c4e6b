package console

import (
	"context"
	"strings"
	"sync"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

var _ core.ReplyStreamer = (*Console)(nil)

// StartLive implements core.ReplyStreamer: a terminal shows the reply as
// it comes, each new piece appended to the line (control characters
// escaped as in Act), and the prompt comes back once it is finished.
func (c *Console) StartLive(context.Context, core.Conversation, string) (core.LiveReply, bool) {
	return &liveLine{c: c}, true
}

// liveLine is a reply printed as it is written. Printed text cannot be
// taken back: a final text that does not continue what was printed is
// printed whole on a line of its own, and an abandoned reply that
// printed something ends with its note.
type liveLine struct {
	c *Console

	mu      sync.Mutex
	printed string // the text printed so far, unescaped
	started bool   // "gatehouse › " is printed
	ended   bool
}

// Update implements core.LiveReply. Trailing newlines wait for the text
// after them: Act prints none at the end of a reply.
func (l *liveLine) Update(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	text = strings.TrimRight(text, "\n")
	if l.ended || text == l.printed || !strings.HasPrefix(text, l.printed) {
		return
	}
	l.print(text[len(l.printed):])
	l.printed = text
}

// Finish implements core.LiveReply.
func (l *liveLine) Finish(_ context.Context, final string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return nil
	}
	l.ended = true
	if !l.started || !strings.HasPrefix(final, l.printed) {
		if l.started {
			l.c.write("\n")
		}
		l.c.notice(textutil.Visible(final))
		return nil
	}
	l.print(strings.TrimRight(final[len(l.printed):], "\n"))
	l.c.write("\n" + l.c.prompt)
	return nil
}

// Abandon implements core.LiveReply.
func (l *liveLine) Abandon(_ context.Context, note string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	l.ended = true
	if !l.started {
		return // nothing was printed: nothing to withdraw
	}
	l.c.write("\n")
	l.c.notice(textutil.Visible(note))
}

// print appends s to the reply's line, starting the line first.
func (l *liveLine) print(s string) {
	var b strings.Builder
	if !l.started {
		if l.c.prompt != "" {
			b.WriteString("\r")
		}
		b.WriteString("gatehouse › ")
		l.started = true
	}
	b.WriteString(textutil.Visible(s))
	l.c.write(b.String())
}
