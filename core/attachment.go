package core

import (
	"context"
	"errors"
	"io"
	"io/fs"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// AttachmentKind tells what sort of file an attachment is, as the
// platform announced it.
type AttachmentKind uint8

// The kinds of attachment.
const (
	// AttachDocument is any file sent as a file.
	AttachDocument AttachmentKind = iota + 1
	// AttachImage is a photo or picture.
	AttachImage
	// AttachVoice is a recorded voice note.
	AttachVoice
	// AttachAudio is an audio file (music, a recording sent as audio).
	AttachAudio
	// AttachVideo is a video or a round video note.
	AttachVideo
)

func (k AttachmentKind) String() string {
	switch k {
	case AttachDocument:
		return "document"
	case AttachImage:
		return "image"
	case AttachVoice:
		return "voice"
	case AttachAudio:
		return "audio"
	case AttachVideo:
		return "video"
	}
	return "unknown"
}

// Fetcher downloads one attachment's bytes. A gateway implements it: the
// platform's file host, token and URL stay inside it, so whoever saves the
// file never sees them. Fetch writes the file to w and fails, having
// written at most max+1 bytes, when it is longer than max; its errors
// never carry a token or a URL that holds one.
type Fetcher interface {
	Fetch(ctx context.Context, w io.Writer, max int64) error
}

// ErrTooBig is what a Fetcher returns (wrapped) when it learns, before or
// while downloading, that the file is longer than its max: the sender is
// told the limit, not that the download failed.
var ErrTooBig = errors.New("attachment over the size limit")

// FetcherFunc is a Fetcher as a function.
type FetcherFunc func(ctx context.Context, w io.Writer, max int64) error

// Fetch calls f.
func (f FetcherFunc) Fetch(ctx context.Context, w io.Writer, max int64) error { return f(ctx, w, max) }

// Attachment is a file received with a chat message. Everything but
// Fetcher is what the sender's platform announced: untrusted.
type Attachment struct {
	// Name is the file name as sent; may be empty (a photo has none).
	Name string
	// MediaType is the announced MIME type; may be empty.
	MediaType string
	// Size is the announced size in bytes; 0 when unknown.
	Size int64
	Kind AttachmentKind
	// Perm is the permission of the file it is a copy of, when the sender
	// has one (a local file attached on the bot's own machine); 0 when
	// unknown (a chat platform's file). The saved copy gets no permission Perm lacks,
	// so a copy never widens who may read it; a value that lies can only
	// narrow it.
	Perm fs.FileMode
	// Fetcher downloads it. Nothing is fetched before the Engine has
	// checked the sender against the allow list.
	Fetcher Fetcher
}

// AttachmentReceiver takes in the attachments of a message from an
// authorised sender (attach): it fetches them within the size
// limit, saves them in the workspace and describes them. The Engine calls
// it in Perceive, after the allow list, before the turn.
type AttachmentReceiver interface {
	Receive(ctx context.Context, s Signal) Received
}

// Received is what became of a message's attachments.
type Received struct {
	// Text tells the model what arrived (saved paths, names, media types,
	// sizes, transcripts); it is added to the user's message.
	Text string
	// Notes are told to the user before the turn: refusals, failed
	// downloads, transcripts quoted.
	Notes []string
	// Images go to a provider with vision, in this turn only; the
	// history keeps Text, never the bytes.
	Images []llm.Image
}
