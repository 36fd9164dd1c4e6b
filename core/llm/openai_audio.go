package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Transcriber turns recorded speech into text.
type Transcriber interface {
	// Transcribe reads the audio file named name (its extension tells the
	// server the format) from r and returns what was said.
	Transcribe(ctx context.Context, name string, r io.Reader) (string, error)
}

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

func (t openAITranscriber) Transcribe(ctx context.Context, name string, r io.Reader) (string, error) {
	if strings.TrimSpace(t.model) == "" {
		return "", errors.New("llm: transcribe: no model")
	}
	rctx, cancel := context.WithTimeout(ctx, t.p.timeout)
	defer cancel()
	tap := &httpTap{}
	rctx = context.WithValue(rctx, tapKey{}, tap)
	resp, err := t.p.client.CreateTranscription(rctx, openai.AudioRequest{
		Model:    t.model,
		FilePath: name,
		Reader:   r,
		Format:   openai.AudioResponseFormatJSON,
	})
	if err != nil {
		return "", fmt.Errorf("llm: transcribe: %w", t.p.wrapError(ctx, rctx, tap, err))
	}
	return resp.Text, nil
}
