package openai

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// DefaultTranscript is what /audio/transcriptions answers until
// SetTranscript says otherwise.
const DefaultTranscript = "Hello from the fake transcriber."

// maxAudio bounds an uploaded audio file the fake reads.
const maxAudio = 64 << 20

// Transcription is one recorded POST /v1/audio/transcriptions.
type Transcription struct {
	Model    string
	FileName string
	// Data is the uploaded file, byte for byte.
	Data          []byte
	Authorization string
}

// transcriber is the fake's /audio/transcriptions state.
type transcriber struct {
	mu       sync.Mutex
	text     string
	status   int // answered instead of a transcript when not 0
	usage    any // the answer's "usage" when not nil
	recorded []Transcription
}

// TranscriptionUsage is the "usage" of a transcription answer as OpenAI's
// newer models (gpt-4o-transcribe) report it: Type "tokens" with the
// token counts, or "duration" with Seconds (whisper-1 through some
// servers).
type TranscriptionUsage struct {
	Type         string  `json:"type"`
	InputTokens  int     `json:"input_tokens,omitempty"`
	OutputTokens int     `json:"output_tokens,omitempty"`
	TotalTokens  int     `json:"total_tokens,omitempty"`
	Seconds      float64 `json:"seconds,omitempty"`
}

// SetTranscriptionUsage makes /audio/transcriptions answer usage beside
// the text (nil: no usage, as whisper-1 answers).
func (s *Server) SetTranscriptionUsage(u *TranscriptionUsage) {
	s.audio.mu.Lock()
	defer s.audio.mu.Unlock()
	s.audio.usage = nil
	if u != nil {
		s.audio.usage = *u
	}
}

// SetTranscript makes /audio/transcriptions answer text.
func (s *Server) SetTranscript(text string) {
	s.audio.mu.Lock()
	defer s.audio.mu.Unlock()
	s.audio.text, s.audio.status = text, 0
}

// FailTranscriptions makes /audio/transcriptions answer an error with
// status (0 answers transcripts again).
func (s *Server) FailTranscriptions(status int) {
	s.audio.mu.Lock()
	defer s.audio.mu.Unlock()
	s.audio.status = status
}

// Transcriptions returns the recorded transcription requests, oldest first.
func (s *Server) Transcriptions() []Transcription {
	s.audio.mu.Lock()
	defer s.audio.mu.Unlock()
	return append([]Transcription(nil), s.audio.recorded...)
}

// serveTranscription answers a multipart transcription request: the
// "file" part and the "model" field, as the API takes them.
func (s *Server) serveTranscription(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxAudio+1<<20)
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		writeError(w, http.StatusBadRequest, "Could not parse multipart form", "invalid_request_error", 0)
		return
	}
	defer r.MultipartForm.RemoveAll()
	f, hdr, err := r.FormFile("file")
	if err != nil {
		writeError(w, http.StatusBadRequest, "Missing file", "invalid_request_error", 0)
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxAudio))
	if err != nil {
		return
	}
	s.bytesIn.Add(int64(len(data)))
	s.audio.mu.Lock()
	s.audio.recorded = append(s.audio.recorded, Transcription{Model: r.FormValue("model"), FileName: hdr.Filename,
		Data: data, Authorization: r.Header.Get("Authorization")})
	text, status, usage := s.audio.text, s.audio.status, s.audio.usage
	s.audio.mu.Unlock()
	if status != 0 {
		writeError(w, status, "transcription failed", "server_error", 0)
		return
	}
	if text == "" {
		text = DefaultTranscript
	}
	w.Header().Set("Content-Type", "application/json")
	answer := map[string]any{"text": text}
	if usage != nil {
		answer["usage"] = usage
	}
	_ = json.NewEncoder(w).Encode(answer)
}
