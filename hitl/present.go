package hitl

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// PresentedFile is one file a held call will write, as its request shows
// it.
type PresentedFile struct {
	Path    string
	Content string
}

// Presenter is implemented by a Dispatcher that shows some calls as the
// files they will write rather than as their arguments (write_skill: the
// whole SKILL.md as it will be written, front matter and body, and every
// file). Present returns them in the order shown; ok is false for a call
// it does not present, which is shown by its arguments.
type Presenter interface {
	Present(call llm.ToolCall) (files []PresentedFile, ok bool)
}

// present returns the files the dispatcher presents call as (nil: none).
func (b *Broker) present(call llm.ToolCall) []PresentedFile {
	p, ok := b.d.(Presenter)
	if !ok {
		return nil
	}
	files, ok := p.Present(call)
	if !ok {
		return nil
	}
	return files
}

// presentedHeadline names the files a presented call writes, with sizes.
func presentedHeadline(files []PresentedFile) string {
	parts := make([]string, len(files))
	for i, f := range files {
		parts[i] = fmt.Sprintf("%s (%d B)", codeSpan(textutil.Graphic(f.Path)), len(f.Content))
	}
	return fmt.Sprintf("writes %d files: %s", len(files), strings.Join(parts, ", "))
}

// renderPresented renders a presented call: every file whole when the
// conversation takes it (room 0, or it fits), else each file cut to its
// share of room and the whole sent as a file.
func (h heldCall) renderPresented(room, other int) rendered {
	head := presentedHeadline(h.presented)
	r := rendered{hidden: hiddenBesidesTabs(head)}
	budget := 0
	if room > 0 {
		budget = (room - other - utf8.RuneCountInString(head) - 16*len(h.presented)) / max(len(h.presented), 1)
	}
	var b strings.Builder
	b.WriteString(head)
	for _, f := range h.presented {
		shown := graphicKeepTabs(f.Content)
		r.hidden = r.hidden || hiddenBesidesTabs(f.Content)
		if room > 0 {
			var long, cut bool
			shown, long = clipEachLine(shown, maxDiffLineRunes)
			shown, cut = clipLines(shown, max(budget, 1))
			r.shortened = r.shortened || long || cut
		}
		fmt.Fprintf(&b, "\n%s:\n%s", codeSpan(textutil.Graphic(f.Path)), codeBlock(shown+"\n"))
	}
	r.body = b.String()
	if r.shortened {
		r.file = core.OutgoingFile{Name: h.a.Token + ".txt", Data: []byte(presentedWhole(h.a, h.presented))}
	}
	return r
}

// presentedWhole is the whole of a presented call as a file for people:
// every file it writes, in full, runes a viewer would hide escaped.
func presentedWhole(a record.Approval, files []PresentedFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Request %s: %s, asked in %s by %s\n%s\n", a.Token, a.Call.Name, a.Conv.Key(), a.RequestedBy, presentedHeadline(files))
	for _, f := range files {
		fmt.Fprintf(&b, "\n===== %s =====\n%s\n", textutil.Graphic(f.Path), graphicKeepTabs(f.Content))
	}
	return b.String()
}

// presentedShow is what /show adds for a presented call: every file it
// writes, in full ("" for any other call).
func presentedShow(h heldCall) string {
	if h.presented == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("what it writes: " + presentedHeadline(h.presented))
	for _, f := range h.presented {
		fmt.Fprintf(&b, "\n%s:\n%s", codeSpan(textutil.Graphic(f.Path)), codeBlock(graphicKeepTabs(f.Content)+"\n"))
	}
	return b.String()
}
