package discord

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
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
	return gateways.Download(ctx, w, gateways.DownloadRequest{
		Prefix:    "discord: download",
		Origin:    g.cdn,
		OffOrigin: "the attachment's URL is not on Discord's CDN; not fetched",
		URL:       f.url,
		// The configured transport, never the session's, which rewrites
		// hosts to api_url and whose requests discordgo signs.
		Transport: g.cfg.HTTPClient.Transport,
		Timeout:   g.cfg.FetchTimeout,
		Max:       max,
		Scrub:     g.scrub,
	})
}
