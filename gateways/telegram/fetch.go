package telegram

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// attachments lists the files of m the bot takes: the largest photo size
// within MaxFileBytes, a document, a voice note, an audio file, a video or
// a video note. Nothing is fetched here: each carries a Fetcher that the
// core calls only after the allow list has passed.
func (g *Gateway) attachments(m *tgbotapi.Message) []core.Attachment {
	var out []core.Attachment
	add := func(id, name, mediaType string, size int, kind core.AttachmentKind) {
		out = append(out, core.Attachment{Name: name, MediaType: mediaType, Size: int64(size), Kind: kind,
			Fetcher: fileFetcher{g: g, fileID: id}})
	}
	if p, ok := largestPhoto(m.Photo, g.cfg.MaxFileBytes); ok {
		add(p.FileID, "", "image/jpeg", p.FileSize, core.AttachImage)
	}
	if d := m.Document; d != nil {
		add(d.FileID, d.FileName, d.MimeType, d.FileSize, core.AttachDocument)
	}
	if v := m.Voice; v != nil {
		add(v.FileID, "", orString(v.MimeType, "audio/ogg"), v.FileSize, core.AttachVoice)
	}
	if a := m.Audio; a != nil {
		add(a.FileID, a.FileName, a.MimeType, a.FileSize, core.AttachAudio)
	}
	if v := m.Video; v != nil {
		add(v.FileID, v.FileName, v.MimeType, v.FileSize, core.AttachVideo)
	}
	if v := m.VideoNote; v != nil {
		add(v.FileID, "", "video/mp4", v.FileSize, core.AttachVideo)
	}
	return out
}

// largestPhoto picks the largest size of a photo whose announced size is
// within max; when none is, the smallest (which the size check refuses,
// naming its size).
func largestPhoto(sizes []tgbotapi.PhotoSize, max int64) (tgbotapi.PhotoSize, bool) {
	if len(sizes) == 0 {
		return tgbotapi.PhotoSize{}, false
	}
	area := func(p tgbotapi.PhotoSize) int64 { return int64(p.Width) * int64(p.Height) }
	best, smallest := -1, 0
	for i, p := range sizes {
		if area(p) < area(sizes[smallest]) {
			smallest = i
		}
		if int64(p.FileSize) <= max && (best < 0 || area(p) > area(sizes[best])) {
			best = i
		}
	}
	if best < 0 {
		best = smallest
	}
	return sizes[best], true
}

// fileFetcher downloads one file: getFile for its path, then
// <api_url>/file/bot<token>/<path>. The token is in that URL, so the URL
// never appears in an error (scrubbed, and url.Error's URL dropped) and no
// redirect to another host is followed.
type fileFetcher struct {
	g      *Gateway
	fileID string
}

func (f fileFetcher) Fetch(ctx context.Context, w io.Writer, max int64) error {
	g := f.g
	ctx, cancel := context.WithTimeout(ctx, g.cfg.FetchTimeout)
	defer cancel()
	file, err := g.api(ctx).GetFile(tgbotapi.FileConfig{FileID: f.fileID})
	if err != nil {
		return fmt.Errorf("telegram: getFile: %w", g.scrub(err))
	}
	if int64(file.FileSize) > max {
		return fmt.Errorf("telegram: file of %d bytes: %w", file.FileSize, core.ErrTooBig)
	}
	p, err := filePath(file.FilePath)
	if err != nil {
		return fmt.Errorf("telegram: getFile: %w", err)
	}
	fileURL := strings.TrimRight(g.cfg.APIURL, "/") + "/file/bot" + g.cfg.Token + "/" + p
	u, err := url.Parse(fileURL)
	if err != nil {
		return errors.New("telegram: download: bad file URL")
	}
	return gateways.Download(ctx, w, gateways.DownloadRequest{
		Prefix:    "telegram: download",
		Origin:    &url.URL{Scheme: u.Scheme, Host: u.Host}, // api_url's: no redirect elsewhere
		OffOrigin: "bad file URL",
		URL:       fileURL,
		Transport: g.cfg.HTTPClient.Transport,
		Max:       max, // ctx's deadline is FetchTimeout, for getFile and this
		Scrub:     g.scrub,
	})
}

// filePath checks getFile's file_path and escapes it for the URL: a
// relative path of plain segments (no "..", no query or fragment).
func filePath(p string) (string, error) {
	if p == "" || strings.HasPrefix(p, "/") || len(p) > 1024 {
		return "", errors.New("no usable file_path")
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s == "" || s == "." || s == ".." {
			return "", errors.New("no usable file_path")
		}
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/"), nil
}
