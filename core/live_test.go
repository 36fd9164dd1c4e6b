package core_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// liveGateway is the recording test gateway that also shows replies live.
type liveGateway struct {
	*recorder
	mu    sync.Mutex
	lives []*liveRec
	ended chan *liveRec
	once  sync.Once
}

func (g *liveGateway) endedCh() chan *liveRec {
	g.once.Do(func() { g.ended = make(chan *liveRec, 100) })
	return g.ended
}

func (g *liveGateway) StartLive(_ context.Context, conv core.Conversation, replyTo string) (core.LiveReply, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	l := &liveRec{g: g, conv: conv, replyTo: replyTo}
	g.lives = append(g.lives, l)
	return l, true
}

// next returns the next live reply to end, failing the test if none does.
func (g *liveGateway) next(t *testing.T) *liveRec {
	t.Helper()
	select {
	case l := <-g.endedCh():
		return l
	case <-time.After(waitFor):
		t.Fatal("no live reply ended")
		return nil
	}
}

// liveRec records one live reply.
type liveRec struct {
	g             *liveGateway
	conv          core.Conversation
	replyTo       string
	mu            sync.Mutex
	updates       []string
	final, note   string
	finished, off bool
}

func (l *liveRec) Update(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.updates = append(l.updates, text)
}

func (l *liveRec) Finish(_ context.Context, final string) error {
	l.mu.Lock()
	l.final, l.finished = final, true
	l.mu.Unlock()
	l.g.endedCh() <- l
	return nil
}

func (l *liveRec) Abandon(_ context.Context, note string) {
	l.mu.Lock()
	l.note, l.off = note, true
	l.mu.Unlock()
	l.g.endedCh() <- l
}

func (l *liveRec) snapshot() (updates []string, final, note string, finished, off bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.updates...), l.final, l.note, l.finished, l.off
}

// usageRec records usage.
type usageRec struct {
	mu  sync.Mutex
	got []llm.Usage
}

func (u *usageRec) AddUsage(_ context.Context, _ string, use llm.Usage) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.got = append(u.got, use)
	return nil
}

func TestStreamedReplyShownLive(t *testing.T) {
	usage := &usageRec{}
	h := newHarness(t, harnessOpts{stream: true, live: true, usage: usage})
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40)
	h.fake().Push(fakeoai.Text(text).Chunked(5, 0))
	h.say(t, "c1", "tell me")
	l := h.lives.next(t)
	updates, final, _, finished, _ := l.snapshot()
	if !finished || final != text {
		t.Fatalf("live reply not finished with the whole text: finished %v, %q", finished, final)
	}
	if len(updates) < 10 {
		t.Errorf("%d updates: the reply was not shown as it was written", len(updates))
	}
	for i, u := range updates {
		if !strings.HasPrefix(text, u) || !strings.HasSuffix(u, " ") {
			t.Fatalf("update %d %q is not the text so far cut after a whole word", i, u)
		}
	}
	select {
	case a := <-h.gw.ch:
		t.Fatalf("the reply was also sent by Act: %q", a.Text)
	default:
	}
	if got := h.eng.Stats().Replies; got != 1 {
		t.Errorf("replies counted %d, want 1", got)
	}
	usage.mu.Lock()
	defer usage.mu.Unlock()
	if len(usage.got) != 1 || usage.got[0].CompletionTokens == 0 {
		t.Errorf("usage recorded %+v, want the streamed answer's", usage.got)
	}
}

func TestStreamedPartialWithASecretIsNeverShown(t *testing.T) {
	const secret = "SECRET-TOKEN-abcdef123456"
	h := newHarness(t, harnessOpts{stream: true, live: true, secrets: secrets.New(secret)})
	h.fake().Push(
		fakeoai.Text("Sure. The token is "+secret+" and that is all there is to it. ").Chunked(3, 0),
		fakeoai.Text("Sorry, I cannot share that. ").Chunked(3, 0),
	)
	h.say(t, "c1", "give me the token")
	first := h.lives.next(t)
	updates, _, note, finished, off := first.snapshot()
	if finished || !off || note == "" {
		t.Fatalf("the refused reply: finished %v, abandoned %v with %q; want it withdrawn", finished, off, note)
	}
	if len(updates) == 0 {
		t.Fatal("nothing was shown before the secret: the test proves nothing")
	}
	for _, u := range updates {
		if strings.Contains(u, "SECRET") || strings.Contains(u, "abcdef") {
			t.Fatalf("an update shows (part of) the secret: %q", u)
		}
	}
	second := h.lives.next(t)
	if _, final, _, finished, _ := second.snapshot(); !finished || final != "Sorry, I cannot share that. " {
		t.Errorf("second answer: finished %v, %q", finished, final)
	}
	if m := lastMessage(t, h.fake(), 1); !strings.Contains(m.Content, "not sent") {
		t.Errorf("the model was not told its reply was refused: %q", m.Content)
	}
}

func TestStreamedTextBeforeAToolCallIsFinalised(t *testing.T) {
	h := newHarness(t, harnessOpts{stream: true, live: true})
	h.fake().Push(
		fakeoai.TextThenCalls("Let me check that for you. ", fakeoai.Call{Name: "echo", Args: `{"text":"ping"}`}).Chunked(4, 0),
		fakeoai.Text("It says ping. ").Chunked(4, 0),
	)
	h.say(t, "c1", "check")
	before := h.lives.next(t)
	if _, final, _, finished, _ := before.snapshot(); !finished || final != "Let me check that for you. " {
		t.Fatalf("text before the call: finished %v with %q, want it finalised as it stands", finished, final)
	}
	after := h.lives.next(t)
	if _, final, _, finished, _ := after.snapshot(); !finished || final != "It says ping. " {
		t.Fatalf("answer: finished %v with %q", finished, final)
	}
	if m := lastMessage(t, h.fake(), 1); m.Role != "tool" || m.Content != "echo: ping" {
		t.Errorf("the tool call did not proceed: %+v", m)
	}
}

func TestStreamedTextOfAFailedProviderIsWithdrawn(t *testing.T) {
	h := newHarness(t, harnessOpts{stream: true, live: true, fakes: 2})
	h.fakes[0].Push(fakeoai.StreamCut())
	h.fakes[1].Push(fakeoai.Text("From the second provider. ").Chunked(4, 0))
	h.say(t, "c1", "hi")
	cut := h.lives.next(t)
	if _, _, note, finished, off := cut.snapshot(); finished || !off || note == "" {
		t.Fatalf("the failed provider's live reply: finished %v, abandoned %v (%q)", finished, off, note)
	}
	ok := h.lives.next(t)
	if _, final, _, finished, _ := ok.snapshot(); !finished || final != "From the second provider. " {
		t.Fatalf("second provider's reply: finished %v, %q", finished, final)
	}
}

func TestNonStreamingProviderRepliesByAct(t *testing.T) {
	h := newHarness(t, harnessOpts{live: true})
	h.fake().Push(fakeoai.Text("Plain answer. "))
	h.say(t, "c1", "hi")
	if a := h.gw.next(t); a.Text != "Plain answer. " {
		t.Fatalf("reply %q", a.Text)
	}
	h.lives.mu.Lock()
	defer h.lives.mu.Unlock()
	if len(h.lives.lives) != 0 {
		t.Errorf("%d live replies started without streaming", len(h.lives.lives))
	}
}

func TestStreamedTextOfTheLastFailedProviderIsWithdrawn(t *testing.T) {
	h := newHarness(t, harnessOpts{stream: true, live: true, fakes: 2})
	h.fakes[0].Push(fakeoai.StreamCut())
	h.fakes[1].Push(fakeoai.StreamCut())
	h.say(t, "c1", "hi")
	first := h.lives.next(t)
	if _, _, note, finished, off := first.snapshot(); finished || !off || !strings.Contains(note, "asking again") {
		t.Fatalf("the first provider's live reply: finished %v, abandoned %v (%q); want it cut off, asking again", finished, off, note)
	}
	// Nobody is asked after the last provider: its text is withdrawn, not
	// said to be asked again.
	last := h.lives.next(t)
	if _, _, note, finished, off := last.snapshot(); finished || !off || note != "(reply withdrawn)" {
		t.Fatalf("the last provider's live reply: finished %v, abandoned %v with %q; want it withdrawn", finished, off, note)
	}
	if a := h.gw.next(t); !strings.Contains(a.Text, "couldn't finish") {
		t.Errorf("reply %q, want the turn's failure told", a.Text)
	}
}
