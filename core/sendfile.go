package core

import "context"

// OutgoingFile is a file the bot sends to a conversation (the send_file
// tool): its bytes, already read, checked and within the gateway's
// MaxFileBytes.
type OutgoingFile struct {
	// Name is the file's base name as the recipient sees it (no
	// directory, no control characters).
	Name string
	// Path is the file's path relative to the workspace, for a gateway
	// that shows where the file is rather than sending it (a local
	// terminal on the machine of the workspace).
	Path string
	// MediaType is the sniffed media type ("image/png",
	// "application/octet-stream"): a gateway may show an image as a photo.
	MediaType string
	// Data is the whole file.
	Data []byte
	// Caption is text sent with the file; may be empty. The core checked
	// it for secrets like a reply.
	Caption string
}

// FileSender is an optional ability of a gateway actuator: send a file to
// one of its conversations, into the conversation's thread, through the
// gateway's delivery layer (pacing, rate limits, retries).
type FileSender interface {
	// SendFile sends f to conv. It returns an error when the file could
	// not be delivered; the error carries no token or file URL.
	SendFile(ctx context.Context, conv Conversation, f OutgoingFile) error
	// MaxFileBytes is the largest file the platform takes from the bot.
	MaxFileBytes() int64
}

// FileSenders finds the FileSender of a gateway by its name.
type FileSenders interface {
	FileSender(gateway string) (FileSender, bool)
}

// FileSender returns the actuator registered under gateway when it can
// send files: how the send_file tool finds the gateway of its turn's
// conversation.
func (r *Actuators) FileSender(gateway string) (FileSender, bool) {
	a, ok := r.Get(gateway)
	if !ok {
		return nil, false
	}
	s, ok := a.(FileSender)
	return s, ok
}

var _ FileSenders = (*Actuators)(nil)
