package gateways

import (
	"sync"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// promptKeep is how long past its approval's expiry a request message is
// remembered, for the late resolutions (expired, executed) that update it.
const promptKeep = time.Hour

// PromptBook remembers, by approval token, the request messages with
// buttons a gateway sent (M is the gateway's note of one message: where it
// is and what it showed), so that ApprovalUpdater can update them once
// the approval is resolved. It lives in memory: after a restart a
// resolution is still sent as a reply, only the old buttons stay (a press
// on them is resolved by the broker as usual). Safe for concurrent use.
type PromptBook[M any] struct {
	mu sync.Mutex
	m  map[string][]*promptEntry[M]
	// resolved holds each token's latest resolution, for a request
	// message added after it was announced (its send was held up).
	resolved map[string]resolvedEntry
}

type resolvedEntry struct {
	r    core.ApprovalResolution
	keep time.Time // forgotten after this
}

type promptEntry[M any] struct {
	msg   M
	keep  time.Time // forgotten after this
	shown string    // the status the message shows; "" while pending
}

// Add records msg as a request message of the approval p. When the
// approval was resolved before msg was added (its send was held up by a
// rate limit while an approver resolved it elsewhere), Add returns that
// resolution: the caller passes it to its ApprovalUpdater once the send is
// done, so that the message does not keep live buttons.
func (b *PromptBook[M]) Add(p core.ApprovalPrompt, msg M) (core.ApprovalResolution, bool) {
	now := time.Now()
	keep := p.Expires.Add(promptKeep)
	if p.Expires.IsZero() {
		keep = now.Add(24 * time.Hour)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = make(map[string][]*promptEntry[M])
	}
	for token, es := range b.m {
		if len(es) > 0 && es[0].keep.Before(now) {
			delete(b.m, token)
		}
	}
	for token, e := range b.resolved {
		if e.keep.Before(now) {
			delete(b.resolved, token)
		}
	}
	b.m[p.Token] = append(b.m[p.Token], &promptEntry[M]{msg: msg, keep: keep})
	e, ok := b.resolved[p.Token]
	return e.r, ok
}

// Update calls update for every request message of r's approval that does
// not show r's status yet, and records the status for those it updated
// (update returned nil). The broker announces a resolution to every
// conversation that saw the request, so the same one may arrive several
// times; each message is updated once per status. It returns how many
// messages the book knows for the token. No lock is held while update runs.
func (b *PromptBook[M]) Update(r core.ApprovalResolution, update func(M) error) int {
	b.mu.Lock()
	if b.resolved == nil {
		b.resolved = make(map[string]resolvedEntry)
	}
	b.resolved[r.Token] = resolvedEntry{r: r, keep: time.Now().Add(promptKeep)}
	var todo []*promptEntry[M]
	for _, e := range b.m[r.Token] {
		if e.shown != r.Status {
			todo = append(todo, e)
		}
	}
	known := len(b.m[r.Token])
	b.mu.Unlock()
	for _, e := range todo {
		if update(e.msg) != nil {
			continue
		}
		b.mu.Lock()
		e.shown = r.Status
		b.mu.Unlock()
	}
	return known
}

// OutcomeLine is the line a resolved request shows:
// "✅ Approved by slack:U123 at 2026-05-01 14:03 UTC".
func OutcomeLine(r core.ApprovalResolution) string {
	line := statusText(r.Status)
	if r.By != "" {
		line += " by " + string(r.By)
	}
	if !r.At.IsZero() {
		line += " at " + r.At.UTC().Format("2006-01-02 15:04 UTC")
	}
	return line
}

func statusText(status string) string {
	switch status {
	case "approved":
		return "✅ Approved"
	case "executed":
		return "✅ Approved and run"
	case "denied":
		return "❌ Denied"
	case "expired":
		return "⌛ Expired"
	case "failed":
		return "⚠️ Approved, but it failed"
	}
	return "Resolved: " + status
}
