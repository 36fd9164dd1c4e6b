package discord

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/core"
)

// DefaultCDNURL is where Discord serves attachments when api_url is
// Discord's own.
const DefaultCDNURL = "https://cdn.discordapp.com"

// cdnOrigin is the scheme and host attachments are fetched from: Discord's
// CDN for Discord's API, the api_url's own origin for any other (a proxy,
// the fake in internal/fake/discord).
func cdnOrigin(apiURL string) (*url.URL, error) {
	base := DefaultCDNURL
	if strings.TrimRight(apiURL, "/") != DefaultAPIURL {
		base = apiURL
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("discord: api_url %q: want http(s)://host[/prefix]", apiURL)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}

// attachments lists m's files. Nothing is fetched here: each carries a
// Fetcher that the core calls only after the allow list has passed.
func (g *Gateway) attachments(m *discordgo.Message) []core.Attachment {
	out := make([]core.Attachment, 0, len(m.Attachments))
	for _, a := range m.Attachments {
		if a == nil {
			continue
		}
		out = append(out, core.Attachment{Name: a.Filename, MediaType: a.ContentType, Size: int64(max(a.Size, 0)),
			Kind: kindOf(a.ContentType, m.Flags&discordgo.MessageFlagsIsVoiceMessage != 0), Fetcher: cdnFetcher{g: g, url: a.URL}})
	}
	return out
}

// kindOf tells an attachment's kind from its announced media type.
func kindOf(mediaType string, voice bool) core.AttachmentKind {
	switch major, _, _ := strings.Cut(strings.ToLower(mediaType), "/"); {
	case voice:
		return core.AttachVoice
	case major == "image":
		return core.AttachImage
	case major == "audio":
		return core.AttachAudio
	case major == "video":
		return core.AttachVideo
	}
	return core.AttachDocument
}

// cdnFetcher downloads one attachment from its URL on Discord's CDN. The
// URL is a signed capability, so it never appears in an error, and the
// bot token is never sent: the request goes through the plain transport,
// not the session's, with no Authorization header, and only to the CDN's
// origin, redirects included.
type cdnFetcher struct {
	g   *Gateway
	url string
}

func (f cdnFetcher) Fetch(ctx context.Context, w io.Writer, max int64) error {
	g := f.g
	u, err := url.Parse(f.url)
	if err != nil || u.Scheme != g.cdn.Scheme || u.Host != g.cdn.Host || u.User != nil {
		return errors.New("discord: download: the attachment's URL is not on Discord's CDN; not fetched")
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return errors.New("discord: download: bad attachment URL")
	}
	resp, err := g.cdnClient().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL is the signed one
		}
		return fmt.Errorf("discord: download: %w", g.scrub(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("discord: download: HTTP %d", resp.StatusCode)
	}
	if resp.ContentLength > max {
		return fmt.Errorf("discord: download: %d bytes: %w", resp.ContentLength, core.ErrTooBig)
	}
	n, err := io.Copy(w, io.LimitReader(resp.Body, max+1))
	if n > max {
		return fmt.Errorf("discord: download: more than %d bytes: %w", max, core.ErrTooBig)
	}
	if err != nil {
		return fmt.Errorf("discord: download: %w", g.scrub(err))
	}
	return nil
}

// cdnClient is a client on the configured transport (never the session's,
// which rewrites hosts to api_url and whose requests discordgo signs) that
// follows a redirect only within the CDN's origin.
func (g *Gateway) cdnClient() *http.Client {
	next := g.cfg.HTTPClient.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	return &http.Client{Transport: next, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		if req.URL.Scheme != g.cdn.Scheme || req.URL.Host != g.cdn.Host {
			return errors.New("refusing a redirect of an attachment download to another host")
		}
		req.Header.Del("Authorization")
		return nil
	}}
}
