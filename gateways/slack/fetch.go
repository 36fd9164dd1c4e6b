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
	u, err := url.Parse(f.url)
	if err != nil || u.Scheme != g.files.Scheme || u.Host != g.files.Host || u.User != nil {
		return errors.New("slack: download: the file's URL is not on Slack's file host; not fetched")
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return errors.New("slack: download: bad file URL")
	}
	req.Header.Set("Authorization", "Bearer "+g.cfg.BotToken)
	resp, err := g.filesClient().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL names the file
		}
		return fmt.Errorf("slack: download: %w", g.scrub(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("slack: download: HTTP %d", resp.StatusCode)
	}
	if loginPage(resp.Header.Get("Content-Type"), f.mediaType) {
		return errors.New("slack: download: Slack answered with a web page, not the file (is the files:read scope missing?)")
	}
	if resp.ContentLength > max {
		return fmt.Errorf("slack: download: %d bytes: %w", resp.ContentLength, core.ErrTooBig)
	}
	n, err := io.Copy(w, io.LimitReader(resp.Body, max+1))
	if n > max {
		return fmt.Errorf("slack: download: more than %d bytes: %w", max, core.ErrTooBig)
	}
	if err != nil {
		return fmt.Errorf("slack: download: %w", g.scrub(err))
	}
	return nil
}

// filesClient is a client on the configured transport that follows a
// redirect only within the file host: the request bears the token.
func (g *Gateway) filesClient() *http.Client {
	next := g.cfg.HTTPClient.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	return &http.Client{Transport: next, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		if req.URL.Scheme != g.files.Scheme || req.URL.Host != g.files.Host {
			return errors.New("refusing a redirect of a file download to another host")
		}
		return nil
	}}
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
