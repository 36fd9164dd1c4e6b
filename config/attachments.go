package config

import (
	"path/filepath"
	"strings"
)

// Attachments configures files received from chat (attach).
type Attachments struct {
	// MaxBytes is the largest attachment taken: a larger one is refused
	// with a reply, before anything is downloaded. Default 20MiB.
	MaxBytes Size `yaml:"max_bytes"`
	// Dir is where received files are saved, relative to
	// tools.workspace (inside it). Default "inbox".
	Dir string `yaml:"dir"`
	// MaxImages is how many images of one message go to a provider with
	// vision: true, 0..16. Default 4.
	MaxImages int `yaml:"max_images"`
}

// Transcribe names the provider and model that turn voice notes and audio
// files into text (an OpenAI-compatible POST /audio/transcriptions). Unset
// (no provider), voice is saved as a file only.
type Transcribe struct {
	// Provider is the name of one of llm.providers.
	Provider string `yaml:"provider"`
	// Model defaults to whisper-1.
	Model string `yaml:"model"`
	// Timeout bounds one transcription; default 60s.
	Timeout Duration `yaml:"timeout"`
}

// defaultTranscribeModel is llm.transcribe.model when a provider is set
// without a model.
const defaultTranscribeModel = "whisper-1"

// defaultAttachments are the attachments section's defaults.
func defaultAttachments() Attachments {
	return Attachments{MaxBytes: 20 << 20, Dir: "inbox", MaxImages: 4}
}

// maxAttachmentBytes bounds attachments.max_bytes: every platform's own
// limit is below it, and a file is held whole for a vision model.
const maxAttachmentBytes = 2 << 30

func (a *Attachments) check(ch *checker) {
	if a.MaxBytes < 1 || a.MaxBytes > maxAttachmentBytes {
		ch.fail("attachments.max_bytes", "want 1 byte to %s, got %s", Size(maxAttachmentBytes), a.MaxBytes)
	}
	ch.intRange("attachments.max_images", a.MaxImages, 0, 16)
	if ch.required("attachments.dir", a.Dir) {
		d := filepath.ToSlash(a.Dir)
		clean := filepath.ToSlash(filepath.Clean(a.Dir))
		if filepath.IsAbs(a.Dir) || strings.HasPrefix(d, "/") || clean == ".." || strings.HasPrefix(clean, "../") {
			ch.fail("attachments.dir", "must be a directory inside tools.workspace (a relative path without ..), got %s", quote(a.Dir))
		}
	}
}

func (t *Transcribe) check(ch *checker, providers []Provider) {
	if t.Provider == "" {
		if t.Model != "" {
			ch.fail("llm.transcribe.provider", "required when llm.transcribe.model is set (the name of one of llm.providers)")
		}
		return
	}
	found := false
	names := make([]string, 0, len(providers))
	for _, p := range providers {
		names = append(names, p.Name)
		found = found || p.Name == t.Provider
	}
	if !found {
		if len(names) == 0 {
			ch.fail("llm.transcribe.provider", "%s is not a configured provider: llm.providers is empty", quote(t.Provider))
		} else {
			ch.fail("llm.transcribe.provider", "%s is not a configured provider (llm.providers: %s)", quote(t.Provider), strings.Join(names, ", "))
		}
	}
	if t.Timeout < 0 {
		ch.fail("llm.transcribe.timeout", "must not be negative, got %s", t.Timeout)
	}
}
