package hitl

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// Nothing that will run is hidden: a request is rendered for each
// conversation's room (core.PromptFiles), and whatever had to be shortened
// goes with it whole, as a file through the gateway's delivery layer. A
// request whose file could not be sent says so and carries no buttons: it
// is answered by typed command, after /show has printed the whole call.

// attachState is what became of a request's file in one conversation.
type attachState int

const (
	attachNone   attachState = iota // nothing was shortened
	attachSent                      // the whole call went with the request
	attachFailed                    // it could not be sent
)

// heldCall is a held call as requests show it: the approval and, for a
// write_file call, its diff against the file as it was when it was held.
type heldCall struct {
	a       record.Approval
	preview writePreview
	diffed  bool // preview holds a write_file preview
	// presented are the files the call writes, shown instead of its
	// arguments (Presenter); nil for any other call.
	presented []PresentedFile
	// head, when set, is a line above the request: a reminder's or an
	// escalation's (nudge.go).
	head string
}

// view looks at a's call as it is to be shown now (a write_file call's
// file is read here, once per request).
func (b *Broker) view(a record.Approval) heldCall {
	p, ok := previewWrite(b.o.Workspace, a.Call)
	return heldCall{a: a, preview: p, diffed: ok, presented: b.present(a.Call)}
}

// maxDiffLineRunes bounds each line of a diff in a request message: a few
// long lines must not take a phone's whole message.
const maxDiffLineRunes = 120

// rendered is a request as one conversation gets it.
type rendered struct {
	body      string // the call: its arguments, or a write_file's diff
	shortened bool
	hidden    bool
	file      core.OutgoingFile // the whole call, when shortened
}

// render renders the call for a conversation whose messages take room
// runes (0: any length), leaving other the runes the rest of the request
// takes.
func (h heldCall) render(room, other int) rendered {
	caps := chatCaps
	if room == 0 {
		caps = wholeCaps
	}
	var r rendered
	switch {
	case h.diffed:
		r = h.renderWrite(room, other)
	case h.presented != nil:
		r = h.renderPresented(room, other)
	default:
		r.body, r.shortened, r.hidden = renderCallCaps(h.a.Call, caps)
	}
	if r.shortened && r.file.Name == "" {
		r.file = core.OutgoingFile{Name: h.a.Token + ".txt", Data: []byte(wholeCall(h.a))}
	}
	if r.file.Name != "" {
		r.file.MediaType = "text/plain; charset=utf-8"
		r.file.Caption = fmt.Sprintf("The whole call of request %s (%s).", h.a.Token, h.a.Call.Name)
	}
	return r
}

// renderWrite renders a write_file call as its headline and as much of
// its diff (a new file's content) as fits room.
func (h heldCall) renderWrite(room, other int) rendered {
	p := h.preview
	r := rendered{hidden: hiddenBesidesTabs(p.Path) || hiddenBesidesTabs(p.body())}
	if !p.New && !p.Diffed {
		r.body, r.shortened = p.headline(), true
		if room == 0 { // a terminal shows the whole new content
			r.body += "\n" + codeBlock(textutil.Graphic(p.Content)+"\n")
		}
	} else {
		shown := textutil.Graphic(p.body())
		if shown == "" {
			shown = "(no change)"
		}
		if room > 0 {
			var long, cut bool
			shown, long = clipEachLine(shown, maxDiffLineRunes)
			budget := room - other - utf8.RuneCountInString(p.headline()) - 16
			shown, cut = clipLines(shown, budget)
			r.shortened = long || cut
		}
		r.body = p.headline() + "\n" + codeBlock(shown+"\n")
	}
	if r.shortened {
		name, text := p.file(h.a.Token)
		r.file = core.OutgoingFile{Name: name, Data: []byte(text)}
	}
	return r
}

// clipLines cuts s to at most n runes at a line's end, marking the cut
// with a last line "…"; cut reports whether it cut.
func clipLines(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	n = max(n-2, 0) // room for "\n…"
	out, used := "", 0
	for _, line := range strings.SplitAfter(s, "\n") {
		k := utf8.RuneCountInString(line)
		if used+k > n {
			if used == 0 { // not even one line fits: cut it
				out = clip(line, max(n, 1))
			}
			break
		}
		out += line
		used += k
	}
	return strings.TrimSuffix(out, "\n") + "\n…", true
}

// clipEachLine clips every line of s to n runes, so that a few long
// lines do not take a phone's whole message; cut reports whether it cut.
func clipEachLine(s string, n int) (string, bool) {
	lines := strings.Split(s, "\n")
	cut := false
	for i, l := range lines {
		var c bool
		lines[i], c = clipped(l, n)
		cut = cut || c
	}
	return strings.Join(lines, "\n"), cut
}

// hiddenBesidesTabs reports a rune a chat app would not show, tabs aside:
// a diff shows them escaped, yet code is full of them.
func hiddenBesidesTabs(s string) bool {
	return textutil.HasHidden(strings.ReplaceAll(s, "\t", ""))
}

// wholeCall is the whole of a held call as a file for people: its tool,
// the command of a shell-like call as it will run, and its arguments as
// indented JSON. Runes a viewer would hide are escaped, tabs kept.
func wholeCall(a record.Approval) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Request %s: %s, asked in %s by %s\n\n", a.Token, a.Call.Name, a.Conv.Key(), a.RequestedBy)
	if fields, ok := argFields(a.Call.Args); ok {
		if command, _, ok := splitCommand(fields); ok {
			fmt.Fprintf(&b, "command:\n%s\n\n", graphicKeepTabs(command))
		}
	}
	fmt.Fprintf(&b, "arguments:\n%s\n", prettyArgs(a.Call.Args))
	return b.String()
}

// promptTo sends the request for h to conv: rendered for conv's room, its
// file sent first when something was shortened; when that file cannot be
// sent, the request says so and goes without buttons.
func (b *Broker) promptTo(ctx context.Context, conv core.Conversation, h heldCall, now time.Time, note string, p core.ApprovalPrompt) error {
	room, pf := 0, core.PromptFiles(nil)
	if f, ok := b.d.(core.PromptFiles); ok {
		pf, room = f, f.PromptRoom(conv)
	} else {
		room = core.DefaultPromptRoom
	}
	// What the request takes besides the call, as it reads when shortened.
	page := b.pageLine(h.a.Token)
	other := utf8.RuneCountInString(page+h.head+requestText(h.a, now, note, rendered{shortened: true}, attachFailed)) +
		max(utf8.RuneCountInString(p.Hint), utf8.RuneCountInString(showHintFor(h.a)))
	r := h.render(room, other)
	state := attachNone
	if r.shortened && room > 0 {
		state = attachSent
		var err error
		if pf == nil {
			err = fmt.Errorf("hitl: %s: files cannot be sent from here", conv.Gateway)
		} else {
			err = pf.SendPromptFile(ctx, conv, r.file)
		}
		if err != nil {
			b.log.Warn().Err(err).Str("conv", conv.Key()).Str("approval", b.ref(h.a.Token)).
				Msg("hitl: the whole call could not be attached to the request; it goes without buttons")
			state = attachFailed
			p.NoButtons, p.Hint = true, showHintFor(h.a)
		}
	}
	text := requestText(h.a, now, note, r, state)
	if h.head != "" {
		text = h.head + "\n" + text
	}
	return b.d.Prompt(ctx, conv, text+page, p)
}

// showFirstHint is the reply hint of a request sent without buttons
// because the whole call could not go with it.
func showFirstHint(token string) string {
	return fmt.Sprintf("Reply /approve %[1]s or /deny %[1]s [reason] once /show %[1]s has printed the whole call; /approve %[1]s always also allows exactly this call, while the files it names stay as they are", token) + grantHint(token)
}
