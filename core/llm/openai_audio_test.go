package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// TestTranscriptionUsageIsRead: go-openai drops a transcription's
// "usage"; the transcriber reads it from the answer: tokens as prompt
// and completion tokens, a duration as seconds, none as zero.
func TestTranscriptionUsageIsRead(t *testing.T) {
	f := fakeopenai.Start(t)
	f.SetTranscript("hello there")
	p, err := llm.NewOpenAI(llm.OpenAIConfig{Name: "oa", BaseURL: f.URL(), APIKey: "sk-test-123", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	tr := p.Transcriber("gpt-4o-transcribe")
	for _, c := range []struct {
		name    string
		usage   *fakeopenai.TranscriptionUsage
		want    llm.Usage
		seconds float64
	}{
		{"tokens", &fakeopenai.TranscriptionUsage{Type: "tokens", InputTokens: 14, OutputTokens: 45, TotalTokens: 59}, llm.Usage{PromptTokens: 14, CompletionTokens: 45}, 0},
		{"duration", &fakeopenai.TranscriptionUsage{Type: "duration", Seconds: 3.5}, llm.Usage{}, 3.5},
		{"negative", &fakeopenai.TranscriptionUsage{Type: "tokens", InputTokens: -5, OutputTokens: 2}, llm.Usage{CompletionTokens: 2}, 0},
		{"none", nil, llm.Usage{}, 0},
	} {
		f.SetTranscriptionUsage(c.usage)
		got, err := tr.Transcribe(context.Background(), "voice.ogg", strings.NewReader("OggS"))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Text != "hello there" || got.Usage != c.want || got.Seconds != c.seconds {
			t.Errorf("%s: got %+v, want usage %+v and %v seconds", c.name, got, c.want, c.seconds)
		}
	}
}
