package gateways

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// liveOp is one request a live reply made of the fake platform.
type liveOp struct {
	edit bool
	id   string
	text string
	at   time.Time
	ok   bool
}

// livePlatform is a fake platform of messages that can be edited.
type livePlatform struct {
	mu       sync.Mutex
	ids      []string          // in the order sent
	shows    map[string]string // id → text
	ops      []liveOp
	editErrs []error // the next edits' answers
}

func newLivePlatform() *livePlatform { return &livePlatform{shows: map[string]string{}} }

func (p *livePlatform) funcs() LiveFuncs {
	return LiveFuncs{
		Send: func(_ context.Context, text string, _ int) (string, error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			id := fmt.Sprint("m", len(p.ids)+1)
			p.ids = append(p.ids, id)
			p.shows[id] = text
			p.ops = append(p.ops, liveOp{id: id, text: text, at: time.Now(), ok: true})
			return id, nil
		},
		Edit: func(_ context.Context, id, text string) error {
			p.mu.Lock()
			defer p.mu.Unlock()
			var err error
			if len(p.editErrs) > 0 {
				err, p.editErrs = p.editErrs[0], p.editErrs[1:]
			}
			p.ops = append(p.ops, liveOp{edit: true, id: id, text: text, at: time.Now(), ok: err == nil})
			if err == nil {
				p.shows[id] = text
			}
			return err
		},
	}
}

func (p *livePlatform) failEdits(errs ...error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.editErrs = append(p.editErrs, errs...)
}

// messages returns what each message shows, in the order sent.
func (p *livePlatform) messages() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, len(p.ids))
	for i, id := range p.ids {
		out[i] = p.shows[id]
	}
	return out
}

func (p *livePlatform) log() []liveOp {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.ops)
}

// checkPace fails when a message was edited sooner than LiveEvery after
// its previous send or edit.
func checkPace(t *testing.T, ops []liveOp) {
	t.Helper()
	last := map[string]time.Time{}
	for _, op := range ops {
		if op.edit {
			if prev, ok := last[op.id]; ok && op.at.Sub(prev) < LiveEvery {
				t.Errorf("message %s edited %s after its previous delivery, want at least %s", op.id, op.at.Sub(prev), LiveEvery)
			}
		}
		if op.ok {
			last[op.id] = op.at
		}
	}
}

// stream feeds text to l in pieces of n bytes, one every gap.
func stream(l *Live, text string, n int, gap time.Duration) {
	for i := n; ; i += n {
		l.Update(text[:min(i, len(text))])
		if i >= len(text) {
			return
		}
		time.Sleep(gap)
	}
}

var liveConv = core.Conversation{Gateway: "test", Chat: "c1"}

func longText(words int) string {
	var b strings.Builder
	for i := range words {
		fmt.Fprintf(&b, "word%d ", i)
		if i%9 == 8 {
			b.WriteString("end.\n")
		}
	}
	return b.String()
}

func TestLiveEndsAsTheMessagesOfAReply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs testutil.SyncBuffer
		o := testOutbox(t, &logs, func(c *OutboxConfig) { c.Limit = 120 })
		p := newLivePlatform()
		text := longText(120)
		l := o.StartLive(t.Context(), liveConv, p.funcs())
		stream(l, text, 7, 30*time.Millisecond)
		if err := l.Finish(t.Context(), text); err != nil {
			t.Fatal(err)
		}
		want := o.Split(text)
		if got := p.messages(); !slices.Equal(got, want) {
			t.Fatalf("messages\n%q\nwant the reply's\n%q", got, want)
		}
		ops := p.log()
		checkPace(t, ops)
		edits := 0
		for _, op := range ops {
			if op.edit {
				edits++
			}
		}
		if edits == 0 {
			t.Error("no edits: the reply was not shown as it was written")
		}
		if s := o.Stats(); s.Sent != uint64(len(want)) || s.Edited != uint64(edits) {
			t.Errorf("stats %+v, want %d sent and %d edited", s, len(want), edits)
		}
	})
}

func TestLiveFirstSendWaitsForASentenceOrOneSecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs testutil.SyncBuffer
		o := testOutbox(t, &logs, func(c *OutboxConfig) { c.Limit = 100 })
		p := newLivePlatform()
		began := time.Now()
		l := o.StartLive(t.Context(), liveConv, p.funcs())
		l.Update("no sentence end")
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		if n := len(p.log()); n != 0 {
			t.Fatalf("%d requests before a sentence end or 1s", n)
		}
		time.Sleep(600 * time.Millisecond)
		synctest.Wait()
		ops := p.log()
		if len(ops) != 1 || ops[0].at.Sub(began) != LiveFirstWait || ops[0].text != "no sentence end" {
			t.Fatalf("ops %+v: want the first send at 1s", ops)
		}
		l.Abandon(t.Context(), "withdrawn")

		p2 := newLivePlatform()
		began = time.Now()
		l2 := o.StartLive(t.Context(), liveConv, p2.funcs())
		l2.Update("Hello there. ")
		synctest.Wait()
		if ops := p2.log(); len(ops) != 1 || ops[0].at != began {
			t.Fatalf("ops %+v: want the first send at once after a sentence end", ops)
		}
		if err := l2.Finish(t.Context(), "Hello there. "); err != nil {
			t.Fatal(err)
		}
		if ops := p2.log(); len(ops) != 1 {
			t.Errorf("ops %+v: an edit that changes nothing was made", ops)
		}
	})
}

func TestLiveEditRateLimitedLosesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs testutil.SyncBuffer
		o := testOutbox(t, &logs, func(c *OutboxConfig) { c.Limit = 120 })
		p := newLivePlatform()
		p.failEdits(retryAfter(3*time.Second, false))
		text := longText(60)
		l := o.StartLive(t.Context(), liveConv, p.funcs())
		stream(l, text, 5, 20*time.Millisecond)
		if err := l.Finish(t.Context(), text); err != nil {
			t.Fatal(err)
		}
		if got, want := p.messages(), o.Split(text); !slices.Equal(got, want) {
			t.Fatalf("messages\n%q\nwant\n%q", got, want)
		}
		ops := p.log()
		checkPace(t, ops)
		for i, op := range ops {
			if !op.ok {
				if i+1 == len(ops) || ops[i+1].at.Sub(op.at) < 3*time.Second {
					t.Errorf("after the 429 the next request came %v later, want ≥ 3s", ops[i+1].at.Sub(op.at))
				}
				break
			}
		}
		if s := o.Stats(); s.Retried != 1 || s.Failed != 0 {
			t.Errorf("stats %+v", s)
		}
	})
}

func TestLiveFailedEditSendsTheTextAnew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs testutil.SyncBuffer
		o := testOutbox(t, &logs, func(c *OutboxConfig) { c.Limit = 120 })
		p := newLivePlatform()
		p.failEdits(permanentErr)
		text := longText(40)
		l := o.StartLive(t.Context(), liveConv, p.funcs())
		stream(l, text, 5, 20*time.Millisecond)
		if err := l.Finish(t.Context(), text); err != nil {
			t.Fatal(err)
		}
		got, want := p.messages(), o.Split(text)
		// The first message keeps its stale text; the reply follows it whole.
		if len(got) != len(want)+1 || !slices.Equal(got[1:], want) || !strings.HasPrefix(text, got[0]) {
			t.Fatalf("messages\n%q\nwant a stale first one, then\n%q", got, want)
		}
		if !strings.Contains(logs.String(), "edit failed") {
			t.Errorf("logs:\n%s", logs.String())
		}
	})
}

func TestLiveAbandonShowsTheNote(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs testutil.SyncBuffer
		o := testOutbox(t, &logs, func(c *OutboxConfig) { c.Limit = 50 })
		p := newLivePlatform()
		text := longText(30)
		l := o.StartLive(t.Context(), liveConv, p.funcs())
		stream(l, text, 10, 100*time.Millisecond)
		synctest.Wait()
		l.Abandon(t.Context(), "(withdrawn)")
		got := p.messages()
		if len(got) < 2 {
			t.Fatalf("want several messages shown, got %q", got)
		}
		for i, m := range got {
			if m != "(withdrawn)" {
				t.Errorf("message %d shows %q after Abandon", i, m)
			}
		}
		checkPace(t, p.log())
		if err := l.Finish(t.Context(), text); err != nil {
			t.Error(err)
		}
		if got := p.messages(); got[0] != "(withdrawn)" {
			t.Errorf("Finish after Abandon changed the messages: %q", got)
		}
	})
}

func TestLiveEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs testutil.SyncBuffer
		o := testOutbox(t, &logs, nil)
		ctx, cancel := context.WithCancel(t.Context())
		l := o.StartLive(ctx, liveConv, newLivePlatform().funcs())
		l.Update("partial")
		cancel()
		synctest.Wait() // the worker has ended: synctest fails on a goroutine left blocked
		if err := l.Finish(t.Context(), "partial"); err == nil {
			t.Error("Finish after the context ended: want its error")
		}
	})
}

func TestLiveAbandonAfterAFailedEditWithdrawsEveryMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs testutil.SyncBuffer
		o := testOutbox(t, &logs, func(c *OutboxConfig) { c.Limit = 120 })
		p := newLivePlatform()
		p.failEdits(permanentErr)
		text := longText(40)
		l := o.StartLive(t.Context(), liveConv, p.funcs())
		stream(l, text, 5, 20*time.Millisecond)
		time.Sleep(2 * LiveEvery) // synctest's clock: the edits are due, the first fails
		synctest.Wait()
		if !strings.Contains(logs.String(), "edit failed") {
			t.Fatalf("no edit failed before Abandon; logs:\n%s", logs.String())
		}
		l.Abandon(t.Context(), "(withdrawn)")
		got := p.messages()
		if len(got) == 0 {
			t.Fatal("nothing was shown")
		}
		for i, m := range got {
			if m != "(withdrawn)" {
				t.Errorf("message %d shows %q after Abandon", i, m)
			}
		}
		checkPace(t, p.log())
	})
}
