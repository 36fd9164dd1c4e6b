package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"path/filepath"
	"strings"
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
	out, err := t.transcribe(rctx, name, r)
	if err != nil {
		return Transcript{}, fmt.Errorf("llm: transcribe: %w", t.p.wrapError(ctx, rctx, err))
	}
	return out, nil
}

// transcribe posts the audio as multipart/form-data (file, model,
// response_format json) and reads the text and usage of the answer.
func (t openAITranscriber) transcribe(ctx context.Context, name string, r io.Reader) (Transcript, error) {
	var form bytes.Buffer
	w := multipart.NewWriter(&form)
	f, err := w.CreateFormFile("file", filepath.Base(name))
	if err != nil {
		return Transcript{}, err
	}
	if _, err := io.Copy(f, r); err != nil {
		return Transcript{}, fmt.Errorf("read the audio: %w", err)
	}
	for k, v := range map[string]string{"model": t.model, "response_format": "json"} {
		if err := w.WriteField(k, v); err != nil {
			return Transcript{}, err
		}
	}
	if err := w.Close(); err != nil {
		return Transcript{}, err
	}
	resp, err := t.p.do(ctx, "/audio/transcriptions", w.FormDataContentType(), &form, false)
	if err != nil {
		return Transcript{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return Transcript{}, err
	}
	if len(body) > maxAnswer {
		return Transcript{}, errAnswerTooLarge
	}
	var a struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return Transcript{}, err
	}
	out := Transcript{Text: a.Text}
	out.Usage, out.Seconds = transcriptionUsage(body)
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
