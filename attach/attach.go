// Package attach takes in files received with chat messages
// (core.AttachmentReceiver): it checks each against attachments.max_bytes
// before anything is downloaded and again while it is read, saves it in
// the workspace (<dir>/<gateway>-<chat>/<UTC time>-<name>, the name
// sanitised, written to a temporary file, synced and renamed, never over
// another file, all through os.Root; new directories 0700, the file 0600,
// or less when the original, a local file, had less), audits it with its SHA-256, and
// describes it to the model: the saved path, the name as sent (escaped),
// media type and size. Images go to a provider with vision (up to
// MaxImages, sniffed, never trusted by name); voice notes and audio are
// transcribed when a Transcriber is set. The Engine calls it only after
// the sender passed the allow list; a gateway's Fetcher keeps the
// platform's URLs and tokens to itself.
package attach

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// MaxPerMessage bounds the attachments of one message taken in; the rest
// are refused with a note.
const MaxPerMessage = 10

// maxNameShown bounds the name as sent, told to the model and audited.
const maxNameShown = 512

// maxTranscript bounds a transcript, in bytes.
const maxTranscript = 8 << 10

// AuditTool and AuditOutcome mark an audit row of a received file.
const (
	AuditTool    = "attachment"
	AuditOutcome = "received"
)

// Audit records received files (the store implements it).
type Audit interface {
	AppendAudit(ctx context.Context, e record.AuditEntry) error
}

// Options configure a Receiver.
type Options struct {
	// Workspace is tools.workspace; Dir (attachments.dir) is inside it.
	Workspace string
	Dir       string
	// MaxBytes is attachments.max_bytes.
	MaxBytes int64
	// Images, when true (a provider has vision), passes up to MaxImages
	// images of a message to the model as bytes.
	Images    bool
	MaxImages int
	// Transcriber, when set (llm.transcribe), turns voice notes and audio
	// into text, each bounded by TranscribeTimeout (default 60s).
	Transcriber       llm.Transcriber
	TranscribeTimeout time.Duration
	// Usage, when set, records the tokens a transcription reported to
	// the conversation, as a model's answer's are, so that the budgets
	// count them.
	Usage core.UsageRecorder
	// Audit records each saved file; optional.
	Audit Audit
	Log   zerolog.Logger
	Now   func() time.Time
}

// Receiver is the core.AttachmentReceiver that saves files in the workspace.
type Receiver struct {
	o Options
}

var _ core.AttachmentReceiver = (*Receiver)(nil)

// New checks o and returns a Receiver. It creates nothing yet.
func New(o Options) (*Receiver, error) {
	if o.Workspace == "" || o.Dir == "" || o.MaxBytes <= 0 {
		return nil, errors.New("attach: workspace, dir and max_bytes are required")
	}
	if d := path.Clean("/" + o.Dir); d == "/" {
		return nil, errors.New("attach: dir must name a directory inside the workspace")
	}
	if o.TranscribeTimeout <= 0 {
		o.TranscribeTimeout = 60 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Receiver{o: o}, nil
}

// Receive takes in s's attachments, in order. It never fails as a whole:
// each file that is refused or fails is a note to the user, and the
// message's own text is handled regardless.
func (r *Receiver) Receive(ctx context.Context, s core.Signal) core.Received {
	var out core.Received
	var desc []string
	log := r.o.Log.With().Str("conv", s.Conv.Key()).Logger()
	atts := s.Attachments
	if len(atts) > MaxPerMessage {
		out.Notes = append(out.Notes, fmt.Sprintf("I take at most %d files of one message; the other %d were not downloaded.", MaxPerMessage, len(atts)-MaxPerMessage))
		atts = atts[:MaxPerMessage]
	}
	root, err := r.openRoot()
	if err != nil {
		log.Error().Err(err).Msg("attach: workspace")
		out.Notes = append(out.Notes, "I could not save your files (the workspace is not usable; the bot's log has the details).")
		return out
	}
	defer root.Close()
	dir := path.Join(path.Clean("/" + r.o.Dir)[1:], chatDir(s.Conv))
	for _, a := range atts {
		d, note := r.one(ctx, log, root, dir, s, a, &out)
		if note != "" {
			out.Notes = append(out.Notes, note)
		}
		if d != "" {
			desc = append(desc, d)
		}
	}
	out.Text = strings.Join(desc, "\n")
	return out
}

// openRoot opens the workspace, creating it (dirPerm, whatever the
// umask) when absent.
func (r *Receiver) openRoot() (*os.Root, error) {
	if _, err := os.Stat(r.o.Workspace); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(r.o.Workspace, dirPerm); err != nil {
			return nil, err
		}
		if err := os.Chmod(r.o.Workspace, dirPerm); err != nil {
			return nil, err
		}
	}
	return os.OpenRoot(r.o.Workspace)
}

// one takes in one attachment: it returns its description for the model
// (empty when nothing was saved) and a note for the user (may be empty).
func (r *Receiver) one(ctx context.Context, log zerolog.Logger, root *os.Root, dir string, s core.Signal, a core.Attachment, out *core.Received) (string, string) {
	shown := textutil.GraphicLine(textutil.Shorten(a.Name, 120))
	if shown == "" {
		shown = "your " + a.Kind.String()
	} else {
		shown = "“" + shown + "”"
	}
	if a.Size > r.o.MaxBytes {
		log.Info().Int64("size", a.Size).Int64("max", r.o.MaxBytes).Msg("attach: over max_bytes, not downloaded")
		return "", fmt.Sprintf("%s is %s; the limit is %s (attachments.max_bytes). It was not downloaded.", upper(shown), humanSize(a.Size), humanSize(r.o.MaxBytes))
	}
	if a.Fetcher == nil {
		return "", fmt.Sprintf("I could not download %s.", shown)
	}
	name := SafeName(a.Name, a.Kind, a.MediaType)
	stamp := r.o.Now().UTC().Format("20060102T150405Z")
	sv, err := save(ctx, root, dir, stamp, name, a, r.o.MaxBytes)
	if errors.Is(err, errTooBig) {
		log.Info().Int64("max", r.o.MaxBytes).Msg("attach: longer than max_bytes while read, discarded")
		return "", fmt.Sprintf("%s is over the limit of %s (attachments.max_bytes; more than %s arrived). Nothing was stored.", upper(shown), humanSize(r.o.MaxBytes), humanSize(r.o.MaxBytes))
	}
	if err != nil {
		log.Warn().Err(err).Str("kind", a.Kind.String()).Msg("attach: download failed")
		return "", fmt.Sprintf("I could not download %s (the bot's log has the details).", shown)
	}
	sum := hex.EncodeToString(sv.sum[:])
	log.Info().Str("path", sv.rel).Int64("size", sv.size).Str("sha256", sum).Msg("attach: saved")
	r.audit(ctx, log, s, a, sv, sum)
	sniffed := http.DetectContentType(sv.head)
	mediaType := a.MediaType
	if mediaType == "" || isImage(sniffed) {
		mediaType = sniffed
	}
	sentAs := "sent without a name"
	if a.Name != "" {
		sentAs = "sent as " + strconv.Quote(textutil.Shorten(a.Name, maxNameShown))
	}
	desc := fmt.Sprintf("[%s received: saved at %s; %s, %s, %d bytes]", a.Kind, strconv.Quote(sv.rel),
		sentAs, strconv.Quote(textutil.Shorten(mediaType, 100)), sv.size)
	if r.o.Images && isImage(sniffed) && len(out.Images) < r.o.MaxImages {
		if data, err := root.ReadFile(sv.rel); err == nil && int64(len(data)) <= r.o.MaxBytes {
			out.Images = append(out.Images, llm.Image{MediaType: sniffed, Data: data})
		} else if err != nil {
			log.Warn().Err(err).Msg("attach: image not read back")
		}
	}
	if r.o.Transcriber != nil && (a.Kind == core.AttachVoice || a.Kind == core.AttachAudio) {
		text, note := r.transcribe(ctx, log, root, s.Conv.Key(), sv.rel, name, shown)
		if text != "" {
			desc += "\n[transcript of the " + a.Kind.String() + " above, the user's words] " + text
		}
		return desc, note
	}
	return desc, ""
}

// transcribe sends the saved file at rel to the Transcriber: it returns
// the transcript (empty on failure) and the note that quotes it to the
// user or says what failed. The file stays saved either way.
func (r *Receiver) transcribe(ctx context.Context, log zerolog.Logger, root *os.Root, conv, rel, name, shown string) (string, string) {
	f, err := root.Open(rel)
	if err != nil {
		log.Warn().Err(err).Msg("attach: transcribe: open")
		return "", fmt.Sprintf("I could not transcribe %s; it is saved as %s.", shown, rel)
	}
	defer f.Close()
	tctx, cancel := context.WithTimeout(ctx, r.o.TranscribeTimeout)
	defer cancel()
	tr, err := r.o.Transcriber.Transcribe(tctx, name, f)
	if err != nil {
		log.Warn().Err(err).Msg("attach: transcription failed")
		return "", fmt.Sprintf("I could not transcribe %s (the bot's log has the details); it is saved as %s.", shown, rel)
	}
	r.usage(ctx, log, conv, tr)
	text := textutil.Shorten(strings.TrimSpace(tr.Text), maxTranscript)
	if text == "" {
		return "", fmt.Sprintf("I heard nothing I could transcribe in %s; it is saved as %s.", shown, rel)
	}
	return text, "Transcript of " + shown + ":\n" + quote(text)
}

// usage records the tokens a transcription reported to conv. A usage
// reported only as a duration has no tokens to count: it is logged.
func (r *Receiver) usage(ctx context.Context, log zerolog.Logger, conv string, tr llm.Transcript) {
	if tr.Seconds > 0 {
		log.Info().Float64("seconds", tr.Seconds).Msg("attach: transcription usage reported as a duration, not counted in budgets")
	}
	if r.o.Usage == nil || tr.Usage.PromptTokens+tr.Usage.CompletionTokens == 0 {
		return
	}
	log.Debug().Int("input_tokens", tr.Usage.PromptTokens).Int("output_tokens", tr.Usage.CompletionTokens).Msg("attach: transcription usage")
	// The tokens are spent: recorded even when the turn is being cancelled.
	if err := r.o.Usage.AddUsage(context.WithoutCancel(ctx), conv, tr.Usage); err != nil {
		log.Warn().Err(err).Msg("attach: transcription usage not recorded")
	}
}

// audit records a saved file with its SHA-256.
func (r *Receiver) audit(ctx context.Context, log zerolog.Logger, s core.Signal, a core.Attachment, sv saved, sum string) {
	if r.o.Audit == nil {
		return
	}
	args, _ := json.Marshal(struct {
		Path      string `json:"path"`
		Name      string `json:"name"`
		MediaType string `json:"media_type"`
		Size      int64  `json:"size"`
		SHA256    string `json:"sha256"`
	}{sv.rel, textutil.Shorten(a.Name, maxNameShown), textutil.Shorten(a.MediaType, 100), sv.size, sum})
	e := record.AuditEntry{At: r.o.Now(), Conv: s.Conv.Key(), Tool: AuditTool, Args: string(args),
		RequestedBy: s.From, Outcome: AuditOutcome, Detail: "sha256:" + sum}
	if err := r.o.Audit.AppendAudit(context.WithoutCancel(ctx), e); err != nil {
		log.Error().Err(err).Msg("attach: audit append failed")
	}
}

// isImage reports the image types a vision model takes.
func isImage(mediaType string) bool {
	switch mediaType {
	case "image/jpeg", "image/png", "image/webp", "image/gif":
		return true
	}
	return false
}

// quote prefixes each line of text with "> ".
func quote(text string) string {
	return "> " + strings.ReplaceAll(text, "\n", "\n> ")
}

func upper(s string) string {
	if strings.HasPrefix(s, "your ") {
		return "Your " + s[len("your "):]
	}
	return s
}

// humanSize writes n bytes in the largest binary unit under it.
func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return trimZero(float64(n)/(1<<30)) + " GiB"
	case n >= 1<<20:
		return trimZero(float64(n)/(1<<20)) + " MiB"
	case n >= 1<<10:
		return trimZero(float64(n)/(1<<10)) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

func trimZero(f float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(f, 'f', 1, 64), ".0")
}
