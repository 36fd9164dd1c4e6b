package core_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// fakeReceiver fetches every attachment (as attach would) and
// answers with a fixed Received.
type fakeReceiver struct {
	answer core.Received

	mu    sync.Mutex
	calls []core.Signal
}

func (r *fakeReceiver) Receive(ctx context.Context, s core.Signal) core.Received {
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
	for _, a := range s.Attachments {
		_ = a.Fetcher.Fetch(ctx, io.Discard, 1<<20)
	}
	return r.answer
}

func (r *fakeReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// countingFetcher counts its fetches.
type countingFetcher struct {
	mu sync.Mutex
	n  int
}

func (f *countingFetcher) Fetch(_ context.Context, w io.Writer, _ int64) error {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	_, err := io.WriteString(w, "data")
	return err
}

func (f *countingFetcher) fetches() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

func submit(t *testing.T, h *harness, from core.Identity, text string, atts ...core.Attachment) {
	t.Helper()
	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "test", Chat: "c"}, From: from, Text: text, Attachments: atts}
	if err := h.eng.Submit(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
}

var png = []byte("\x89PNG\r\n\x1a\n fake image bytes")

// TestStrangersAttachmentIsNeverFetched: a file from a sender not on the
// allow list never reaches the receiver, and nothing fetches it; the
// same file from an allowed sender is received.
func TestStrangersAttachmentIsNeverFetched(t *testing.T) {
	rcv := &fakeReceiver{answer: core.Received{Text: "[file]"}}
	h := newHarness(t, harnessOpts{allow: []string{"test:alice"}, attachments: rcv})
	f := &countingFetcher{}
	att := core.Attachment{Name: "x.txt", Kind: core.AttachDocument, Size: 4, Fetcher: f}
	submit(t, h, "test:mallory", "", att)
	submit(t, h, "test:mallory", "look", att)
	if rcv.count() != 0 || f.fetches() != 0 {
		t.Fatalf("a stranger's attachment was received %d times, fetched %d times", rcv.count(), f.fetches())
	}
	if n := len(h.fake().Requests()); n != 0 {
		t.Fatalf("the model was asked %d times", n)
	}
	submit(t, h, "test:alice", "", att)
	if rcv.count() != 1 || f.fetches() != 1 {
		t.Fatalf("an allowed sender's attachment: received %d, fetched %d; want 1, 1", rcv.count(), f.fetches())
	}
	if got := lastMessage(t, h.fake(), 0); got.Content != "[file]" {
		t.Errorf("the model saw %q, want the receiver's text alone", got.Content)
	}
}

// TestImagesGoToAVisionProviderInTheirTurnOnly: the caption and the
// receiver's description reach the model as one user message with the
// image bytes as an image part; the next turn carries the text only; the
// stored history never holds the bytes.
func TestImagesGoToAVisionProviderInTheirTurnOnly(t *testing.T) {
	rcv := &fakeReceiver{answer: core.Received{Text: "[image inbox/a.png]", Images: []llm.Image{{MediaType: "image/png", Data: png}}}}
	hist := core.NewMemoryHistory(40)
	h := newHarness(t, harnessOpts{vision: []bool{true}, attachments: rcv, history: hist})
	submit(t, h, "test:alice", "what is this?", core.Attachment{Kind: core.AttachImage, Fetcher: &countingFetcher{}})
	got := lastMessage(t, h.fake(), 0)
	if got.Content != "what is this?\n\n[image inbox/a.png]" {
		t.Errorf("text %q", got.Content)
	}
	if len(got.Images) != 1 || got.Images[0].MediaType != "image/png" || !bytes.Equal(got.Images[0].Data, png) {
		t.Fatalf("images %+v, want exactly the bytes sent", got.Images)
	}
	submit(t, h, "test:alice", "and now?")
	for _, m := range h.fake().Requests()[1].Messages {
		if len(m.Images) > 0 {
			t.Errorf("a later turn sent the image again: %+v", m)
		}
	}
	stored, _ := hist.Load(context.Background(), "test:c")
	for _, m := range stored {
		if len(m.Images) > 0 {
			t.Errorf("the history kept image bytes: %+v", m)
		}
	}
}

// TestCascadeFallbackWithoutVisionGetsTheTextOnly: when the vision
// provider fails, the next one, without vision, answers from the text that
// names the file, with no image part.
func TestCascadeFallbackWithoutVisionGetsTheTextOnly(t *testing.T) {
	rcv := &fakeReceiver{answer: core.Received{Text: "[image inbox/a.png]", Images: []llm.Image{{MediaType: "image/png", Data: png}}}}
	h := newHarness(t, harnessOpts{fakes: 2, vision: []bool{true, false}, attachments: rcv})
	h.fakes[0].Push(fakeoai.Status(http.StatusInternalServerError, 0))
	submit(t, h, "test:alice", "", core.Attachment{Kind: core.AttachImage, Fetcher: &countingFetcher{}})
	if got := lastMessage(t, h.fakes[0], 0); len(got.Images) != 1 {
		t.Errorf("the vision provider got %d images", len(got.Images))
	}
	got := lastMessage(t, h.fakes[1], 0)
	if len(got.Images) != 0 || got.Content != "[image inbox/a.png]" {
		t.Errorf("the fallback got %q with %d images, want the text alone", got.Content, len(got.Images))
	}
	if r := h.gw.next(t); r.Text != fakeoai.DefaultAnswer {
		t.Errorf("reply %q", r.Text)
	}
}

// TestAttachmentNotesAreToldBeforeTheTurn: the receiver's notes (a
// refusal, a transcript) reach the user before the model's answer, and a
// message whose only file was refused starts no turn.
func TestAttachmentNotesAreToldBeforeTheTurn(t *testing.T) {
	rcv := &fakeReceiver{answer: core.Received{Notes: []string{"too big"}}}
	h := newHarness(t, harnessOpts{attachments: rcv})
	submit(t, h, "test:alice", "", core.Attachment{Kind: core.AttachDocument, Fetcher: &countingFetcher{}})
	if r := h.gw.next(t); r.Text != "too big" {
		t.Errorf("first reply %q", r.Text)
	}
	if n := len(h.fake().Requests()); n != 0 {
		t.Errorf("a message with nothing left asked the model %d times", n)
	}
	rcv.answer = core.Received{Notes: []string{"> hello"}, Text: "[transcript] hello"}
	submit(t, h, "test:alice", "", core.Attachment{Kind: core.AttachVoice, Fetcher: &countingFetcher{}})
	if r := h.gw.next(t); r.Text != "> hello" {
		t.Errorf("first reply %q, want the note", r.Text)
	}
	if r := h.gw.next(t); r.Text != fakeoai.DefaultAnswer {
		t.Errorf("second reply %q, want the answer", r.Text)
	}
}

// TestAttachmentWithoutReceiverIsAnswered: with no receiver configured the
// sender is told, and the caption is still handled.
func TestAttachmentWithoutReceiverIsAnswered(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	f := &countingFetcher{}
	submit(t, h, "test:alice", "hi", core.Attachment{Kind: core.AttachDocument, Fetcher: f})
	if r := h.gw.next(t); !strings.Contains(r.Text, "not set up") {
		t.Errorf("first reply %q", r.Text)
	}
	if r := h.gw.next(t); r.Text != fakeoai.DefaultAnswer || f.fetches() != 0 {
		t.Errorf("reply %q, fetches %d", r.Text, f.fetches())
	}
}

// TestOverBudgetFetchesNothing: a message with files in a conversation
// over its budget is refused before anything is fetched; before, the
// files were downloaded and a voice note transcribed (a paid call) only
// for the turn to be refused.
func TestOverBudgetFetchesNothing(t *testing.T) {
	rcv := &fakeReceiver{answer: core.Received{Text: "[file]"}}
	h := newHarness(t, harnessOpts{budget: &switchBudget{over: true}, attachments: rcv})
	f := &countingFetcher{}
	submit(t, h, core.Identity("test:alice"), "listen", core.Attachment{Name: "v.ogg", Kind: core.AttachVoice, Size: 4, Fetcher: f})
	if got := h.gw.next(t).Text; !strings.Contains(got, "budget.daily_tokens") {
		t.Errorf("told %q; want the cap", got)
	}
	if rcv.count() != 0 || f.fetches() != 0 {
		t.Errorf("over budget: received %d times, fetched %d times; want 0, 0", rcv.count(), f.fetches())
	}
	if n := len(h.fake().Requests()); n != 0 {
		t.Errorf("the model had %d requests over budget, want 0", n)
	}
}
