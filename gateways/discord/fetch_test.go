package discord

import (
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
)

// TestCDNOrigin: Discord's own api_url fetches from Discord's CDN; any
// other (a proxy, the fake) from its own scheme and host, path dropped.
func TestCDNOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://discord.com":              "https://cdn.discordapp.com",
		"https://discord.com/":             "https://cdn.discordapp.com",
		"http://127.0.0.1:8080":            "http://127.0.0.1:8080",
		"https://proxy.example/discord/v9": "https://proxy.example",
	} {
		u, err := cdnOrigin(in)
		if err != nil || u.String() != want {
			t.Errorf("cdnOrigin(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
}

func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		mediaType string
		voice     bool
		want      core.AttachmentKind
	}{
		{"image/png", false, core.AttachImage},
		{"IMAGE/JPEG", false, core.AttachImage},
		{"audio/ogg", true, core.AttachVoice},
		{"audio/mpeg", false, core.AttachAudio},
		{"video/mp4", false, core.AttachVideo},
		{"application/pdf", false, core.AttachDocument},
		{"", false, core.AttachDocument},
	} {
		if got := kindOf(tc.mediaType, tc.voice); got != tc.want {
			t.Errorf("kindOf(%q, %v) = %v, want %v", tc.mediaType, tc.voice, got, tc.want)
		}
	}
}
