package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Transcriber turns recorded speech into text.
type Transcriber interface {
	// Transcribe reads the audio file named name (its extension tells the
	// server the format) from r and returns what was said, with the
	// usage the server reported.
	Transcribe(ctx context.Context, name string, r io.Reader) (Transcript, error)
}

// Transcript is what a transcription returned.
type Transcript struct {
	Text string
	// Usage is the tokens the server reported ("usage" of type "tokens",
	// as gpt-4o-transcribe answers): input_tokens as PromptTokens,
	// output_tokens as CompletionTokens. Zero when it reported none
	// (whisper-1) or only a duration. CostUSD is left 0.
	Usage Usage
	// Seconds is the audio's duration when the server reported usage as
	// a duration ("usage" of type "duration"); it is not a token count.
	Seconds float64
}

// maxTranscriptionAnswer bounds the copy of a transcription's answer kept
// to read its usage (go-openai drops the field); a longer answer's usage
// is not read.
const maxTranscriptionAnswer = 1 << 20

// Transcriber returns a Transcriber over the provider's OpenAI-compatible
// POST /audio/transcriptions with model (e.g. whisper-1). One request is
// bounded by the provider's timeout; errors, like Complete's, name the
// provider and never hold its key.
func (p *OpenAI) Transcriber(model string) Transcriber {
	return openAITranscriber{p: p, model: model}
}

type openAITranscriber struct {
	p     *OpenAI
	model string
}

func (t openAITranscriber) Transcribe(ctx context.Context, name string, r io.Reader) (Transcript, error) {
	if strings.TrimSpace(t.model) == "" {
		return Transcript{}, errors.New("llm: transcribe: no model")
	}
	rctx, cancel := context.WithTimeout(ctx, t.p.timeout)
	defer cancel()
	tap := &httpTap{keep: maxTranscriptionAnswer}
	rctx = context.WithValue(rctx, tapKey{}, tap)
	resp, err := t.p.client.CreateTranscription(rctx, openai.AudioRequest{
		Model:    t.model,
		FilePath: name,
		Reader:   r,
		Format:   openai.AudioResponseFormatJSON,
	})
	if err != nil {
		return Transcript{}, fmt.Errorf("llm: transcribe: %w", t.p.wrapError(ctx, rctx, tap, err))
	}
	out := Transcript{Text: resp.Text}
	if !tap.cut {
		out.Usage, out.Seconds = transcriptionUsage(tap.body.Bytes())
	}
	return out, nil
}

// transcriptionUsage reads the "usage" of a transcription's JSON answer:
// tokens when its type is "tokens", seconds when it is "duration". Counts
// that are negative or absent are zero.
func transcriptionUsage(body []byte) (Usage, float64) {
	var a struct {
		Usage *struct {
			Type         string  `json:"type"`
			InputTokens  int     `json:"input_tokens"`
			OutputTokens int     `json:"output_tokens"`
			Seconds      float64 `json:"seconds"`
		} `json:"usage"`
	}
	if json.Unmarshal(body, &a) != nil || a.Usage == nil {
		return Usage{}, 0
	}
	switch u := a.Usage; u.Type {
	case "tokens":
		return Usage{PromptTokens: max(u.InputTokens, 0), CompletionTokens: max(u.OutputTokens, 0)}, 0
	case "duration":
		if u.Seconds > 0 && !math.IsInf(u.Seconds, 0) {
			return Usage{}, u.Seconds
		}
	}
	return Usage{}, 0
}
