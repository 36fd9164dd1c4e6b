package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// attachCommand is the console's own command that sends a local file as
// an attachment: "/attach PATH", or "/attach PATH -- caption".
const attachCommand = "/attach"

// attachUsage answers a bare /attach.
const attachUsage = "usage: /attach PATH [-- caption]: sends a local file as an attachment"

// parseAttach reports whether line is an /attach command and returns its
// path and caption.
func parseAttach(line string) (path, caption string, ok bool) {
	rest, ok := strings.CutPrefix(line, attachCommand)
	if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", "", false
	}
	path, caption, _ = strings.Cut(strings.TrimSpace(rest), " -- ")
	return strings.TrimSpace(path), strings.TrimSpace(caption), true
}

// attachment describes the local file at path, or says why it cannot be
// sent. Nothing is read here: the core fetches it after the allow list,
// within attachments.max_bytes.
func attachment(path string) (core.Attachment, error) {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, rest)
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		return core.Attachment{}, err
	}
	if !info.Mode().IsRegular() {
		return core.Attachment{}, fmt.Errorf("%s is not a regular file", path)
	}
	mediaType, kind := typeOf(path)
	// Perm: the copy saved in the workspace gets no permission the
	// original lacks (a 0600 file is not copied 0644).
	return core.Attachment{Name: filepath.Base(path), MediaType: mediaType, Size: info.Size(), Kind: kind,
		Perm: info.Mode().Perm(), Fetcher: localFile(path)}, nil
}

// typeOf guesses a local file's media type and kind from its extension;
// the receiver sniffs images from the bytes anyway.
func typeOf(path string) (string, core.AttachmentKind) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jpg", ".jpeg":
		return "image/jpeg", core.AttachImage
	case ".png":
		return "image/png", core.AttachImage
	case ".webp":
		return "image/webp", core.AttachImage
	case ".gif":
		return "image/gif", core.AttachImage
	case ".ogg", ".oga", ".opus":
		return "audio/ogg", core.AttachVoice
	case ".mp3":
		return "audio/mpeg", core.AttachAudio
	case ".m4a":
		return "audio/mp4", core.AttachAudio
	case ".wav":
		return "audio/wav", core.AttachAudio
	case ".mp4":
		return "video/mp4", core.AttachVideo
	case ".pdf":
		return "application/pdf", core.AttachDocument
	case ".txt", ".log", ".md":
		return "text/plain", core.AttachDocument
	}
	return "", core.AttachDocument
}

// localFile fetches a local file: opened without blocking on a FIFO,
// refused unless regular, at most max bytes.
type localFile string

func (p localFile) Fetch(ctx context.Context, w io.Writer, max int64) error {
	f, err := os.OpenFile(string(p), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("console: attach: %w", err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return errors.New("console: attach: not a regular file")
	}
	n, err := io.Copy(w, io.LimitReader(f, max+1))
	if n > max {
		return fmt.Errorf("console: attach: more than %d bytes: %w", max, core.ErrTooBig)
	}
	if err != nil {
		return fmt.Errorf("console: attach: %w", err)
	}
	return ctx.Err()
}

// attachSignal builds the signal of an /attach line; ok is false, the
// user told why, when there is nothing to send.
func (c *Console) attachSignal(path, caption string) (core.Signal, bool) {
	if path == "" {
		c.notice(attachUsage)
		return core.Signal{}, false
	}
	a, err := attachment(path)
	if err != nil {
		c.notice("cannot attach " + textutil.Visible(path) + ": " + textutil.Visible(err.Error()))
		return core.Signal{}, false
	}
	return core.Signal{Kind: core.KindMessage, Conv: Conversation(), From: Identity, Text: caption, Private: true,
		Attachments: []core.Attachment{a}}, true
}
