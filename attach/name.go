package attach

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/core"
)

// MaxName is the longest sanitised file name, in bytes.
const MaxName = 100

// maxExt is the longest extension kept; a longer "extension" is part of
// the name.
const maxExt = 16

// SafeName returns name as a file name that is safe to create in a
// directory: no path separators, no "..", no leading dot or space, no
// control, bidi or other format characters, valid UTF-8, at most MaxName
// bytes with the extension kept. An empty result is replaced by a name
// for kind (with an extension for mediaType's common types).
func SafeName(name string, kind core.AttachmentKind, mediaType string) string {
	name = strings.ToValidUTF8(name, "_")
	name = strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '\\' || r == 0:
			return '_'
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r):
			return '_' // includes every bidi control (U+202A…E, U+2066…9, marks)
		case !unicode.IsGraphic(r) && r != ' ':
			return '_'
		}
		return r
	}, name)
	for strings.Contains(name, "..") {
		name = strings.ReplaceAll(name, "..", "_")
	}
	name = strings.TrimLeft(name, ". ")
	name = strings.TrimRight(name, ". ")
	if name == "" || name == "_" {
		name = defaultName(kind, mediaType)
	}
	return cut(name, MaxName)
}

// cut shortens name to at most max bytes on a rune boundary, keeping its
// extension when it has a short one.
func cut(name string, max int) string {
	if len(name) <= max {
		return name
	}
	ext := path.Ext(name)
	if len(ext) > maxExt || len(ext) == len(name) {
		ext = ""
	}
	base := name[:len(name)-len(ext)]
	room := max - len(ext)
	for room > 0 && !utf8.RuneStart(base[room]) {
		room--
	}
	// A cut that ends at a dot would make ".." with the extension's.
	base = strings.TrimRight(base[:room], ". ")
	if base == "" {
		base = "file"
	}
	return base + ext
}

// defaultName names a file that came without a usable name.
func defaultName(kind core.AttachmentKind, mediaType string) string {
	ext := map[string]string{
		"image/jpeg": ".jpg", "image/png": ".png", "image/webp": ".webp", "image/gif": ".gif",
		"audio/ogg": ".ogg", "audio/mpeg": ".mp3", "audio/mp4": ".m4a", "video/mp4": ".mp4",
		"application/pdf": ".pdf", "text/plain": ".txt",
	}[strings.ToLower(strings.TrimSpace(strings.Split(mediaType, ";")[0]))]
	switch kind {
	case core.AttachImage:
		if ext == "" {
			ext = ".jpg"
		}
		return "photo" + ext
	case core.AttachVoice:
		if ext == "" {
			ext = ".ogg"
		}
		return "voice" + ext
	case core.AttachAudio:
		return "audio" + ext
	case core.AttachVideo:
		if ext == "" {
			ext = ".mp4"
		}
		return "video" + ext
	}
	return "file" + ext
}

// chatDir names a conversation's directory: <gateway>-<chat>, thread
// appended, sanitised like a file name.
func chatDir(c core.Conversation) string {
	s := c.Gateway + "-" + c.Chat
	if c.Thread != "" {
		s += "-" + c.Thread
	}
	return SafeName(strings.ReplaceAll(s, ":", "_"), core.AttachDocument, "")
}
