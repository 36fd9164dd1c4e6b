package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/slack-go/slack"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// DefaultFilesURL is where Slack serves files when api_url is Slack's.
const DefaultFilesURL = "https://files.slack.com"

// filesOrigin is the scheme and host files are fetched from with the bot
// token: files.slack.com for Slack's Web API, the api_url's own scheme and
// host for any other (a proxy, the fake in internal/fake/slack).
func filesOrigin(apiURL string) (*url.URL, error) {
	base := DefaultFilesURL
	if apiURL != DefaultAPIURL {
		base = apiURL
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("slack: api_url %q: want http(s)://host/…", apiURL)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}

// attachments lists the files shared in a message. Nothing is fetched
// here: each carries a Fetcher that the core calls only after the allow
// list has passed.
func (g *Gateway) attachments(files []slack.File) []core.Attachment {
	if len(files) == 0 {
		return nil
	}
	out := make([]core.Attachment, 0, len(files))
	for _, f := range files {
		kind, mediaType := kindOf(f.Mimetype, f.MediaDisplayType)
		out = append(out, core.Attachment{Name: f.Name, MediaType: mediaType, Size: int64(max(f.Size, 0)),
			Kind: kind, Fetcher: fileFetcher{g: g, url: f.URLPrivateDownload, mediaType: f.Mimetype}})
	}
	return out
}

// kindOf tells a file's kind from its announced media type and Slack's
// media_display_type, and returns the media type to tell the model. An
// audio clip recorded in Slack (subtype slack_audio, which slack-go does
// not decode) has media_display_type "audio" but is at times announced as
// video/mp4 or video/webm: it is audio, so that it is transcribed, and
// its media type is told as audio/mp4 or audio/webm.
func kindOf(mediaType, display string) (core.AttachmentKind, string) {
	major, sub, _ := strings.Cut(strings.ToLower(mediaType), "/")
	switch {
	case major == "image":
		return core.AttachImage, mediaType
	case major == "audio":
		return core.AttachAudio, mediaType
	case strings.EqualFold(display, "audio") && major == "video" && sub != "":
		return core.AttachAudio, "audio/" + sub
	case major == "video":
		return core.AttachVideo, mediaType
	}
	return core.AttachDocument, mediaType
}

// fileFetcher downloads one file from its url_private_download with the
// bot token as a bearer, only when that URL is on Slack's file host: a URL
// elsewhere is refused before any request, so the token goes nowhere else,
// and a redirect is followed only within that host. Neither the URL nor
// the token appears in an error.
type fileFetcher struct {
	g         *Gateway
	url       string
	mediaType string // as announced
}

func (f fileFetcher) Fetch(ctx context.Context, w io.Writer, max int64) error {
	g := f.g
	if f.url == "" {
		return errors.New("slack: download: the file has no url_private_download (deleted, external or hidden by the plan)")
	}
	return gateways.Download(ctx, w, gateways.DownloadRequest{
		Prefix:    "slack: download",
		Origin:    g.files,
		OffOrigin: "the file's URL is not on Slack's file host; not fetched",
		URL:       f.url,
		Header:    http.Header{"Authorization": {"Bearer " + g.cfg.BotToken}},
		Transport: g.cfg.HTTPClient.Transport,
		Timeout:   g.cfg.FetchTimeout,
		Max:       max,
		Check: func(resp *http.Response) error {
			if loginPage(resp.Header.Get("Content-Type"), f.mediaType) {
				return errors.New("Slack answered with a web page, not the file (is the files:read scope missing?)")
			}
			return nil
		},
		Scrub: g.scrub,
	})
}

// loginPage reports whether a download answered with an HTML page where
// the file is not one: Slack answers a token without files:read (or none)
// with its sign-in page and a 200.
func loginPage(contentType, announced string) bool {
	html := func(t string) bool {
		return strings.HasPrefix(strings.ToLower(strings.TrimSpace(t)), "text/html")
	}
	return html(contentType) && !html(announced)
}
