package llm_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// recSink records what a provider streams.
type recSink struct {
	mu       sync.Mutex
	texts    []string
	discards int
}

func (s *recSink) Text(soFar string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.texts = append(s.texts, soFar)
}

func (s *recSink) Discard() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.discards++
	s.texts = append(s.texts, "<discard>")
}

func TestStreamTellsTheSinkTheGrowingText(t *testing.T) {
	srv := fakeopenai.Start(t)
	text := strings.Repeat("word ", 100)
	srv.Push(fakeopenai.Text(text).Chunked(7, 0))
	sink := &recSink{}
	req := userReq("hi")
	req.Sink = sink
	resp, err := newOpenAI(t, srv.URL(), true).Complete(context.Background(), req)
	if err != nil || resp.Message.Content != text {
		t.Fatalf("answer %q, %v", resp.Message.Content, err)
	}
	if n := len(sink.texts); n < len(text)/7 {
		t.Fatalf("sink told %d times, want one per chunk (%d)", n, len(text)/7)
	}
	for i, got := range sink.texts {
		if !strings.HasPrefix(text, got) || i > 0 && len(got) <= len(sink.texts[i-1]) {
			t.Fatalf("call %d: %q does not extend the previous text", i, got)
		}
	}
	if last := sink.texts[len(sink.texts)-1]; last != text {
		t.Errorf("last text %q, want the whole answer", last)
	}
	if resp.Usage.CompletionTokens == 0 || resp.Usage.PromptTokens == 0 {
		t.Errorf("usage not recorded with streaming: %+v", resp.Usage)
	}
}

func TestNonStreamingProviderNeverCallsTheSink(t *testing.T) {
	srv := fakeopenai.Start(t)
	sink := &recSink{}
	req := userReq("hi")
	req.Sink = sink
	if _, err := newOpenAI(t, srv.URL(), false).Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if len(sink.texts) != 0 {
		t.Errorf("sink told %q", sink.texts)
	}
}

func TestCascadeDiscardsTheTextOfAProviderThatFailed(t *testing.T) {
	first, second := fakeopenai.Start(t), fakeopenai.Start(t)
	p1 := newOpenAI(t, first.URL(), true, func(c *llm.OpenAIConfig) { c.Name = "p1" })
	p2 := newOpenAI(t, second.URL(), true, func(c *llm.OpenAIConfig) { c.Name = "p2" })
	first.Push(fakeopenai.StreamCut())
	second.Push(fakeopenai.Text("the real answer"))
	sink := &recSink{}
	req := userReq("hi")
	req.Sink = sink
	resp, err := llm.NewCascade(zerolog.Nop(), p1, p2).Complete(context.Background(), req)
	if err != nil || resp.Provider != "p2" {
		t.Fatalf("%+v, %v", resp, err)
	}
	i := 0
	for i < len(sink.texts) && sink.texts[i] != "<discard>" {
		i++
	}
	if i == 0 || i == len(sink.texts) || sink.discards != 1 {
		t.Fatalf("want p1's text, one discard, then p2's: %q", sink.texts)
	}
	for _, s := range sink.texts[i+1:] {
		if !strings.HasPrefix("the real answer", s) {
			t.Errorf("after the discard the sink was told %q, not p2's text", s)
		}
	}
	if sink.texts[len(sink.texts)-1] != "the real answer" {
		t.Errorf("last text %q", sink.texts[len(sink.texts)-1])
	}
}
