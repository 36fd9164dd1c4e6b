package discord_test

// End-to-end tests of attachments: files sent on Discord through the
// unmodified discordgo and the fake gateway and CDN, saved by
// attach, seen by the fake OpenAI server.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

var pngBytes = gatewaytest.PNG()

// waitModel waits for the n-th request to the model and returns it.
func (e *e2e) waitModel(t *testing.T, n int) fakeoai.Request {
	t.Helper()
	return gatewaytest.WaitRequest(t, e.ai, n)
}

// withFiles is a DM from from with text and files.
func (e *e2e) withFiles(from fakediscord.User, text string, files ...fakediscord.Attachment) fakediscord.Message {
	return fakediscord.Message{ChannelID: e.dc.DMChannel(from.ID), Author: from, Content: text, Attachments: files}
}

// noTokenSent fails when a download carried an Authorization header, or
// when an attachment's signed URL is in the log.
func (e *e2e) noTokenSent(t *testing.T) {
	t.Helper()
	if logs := e.logs.String(); strings.Contains(logs, "/attachments/") || strings.Contains(logs, "hm=") {
		t.Errorf("an attachment URL is in the log:\n%s", logs)
	}
	for _, d := range e.dc.Downloads() {
		if d.Authorization != "" {
			t.Errorf("a CDN download carried Authorization %q", d.Authorization)
		}
	}
}

func TestE2EImageWithTextReachesAVisionProvider(t *testing.T) {
	e := startE2EWith(t, func(c *config.Config) { c.LLM.Providers[0].Vision = true })
	ch := e.dc.DMChannel(guest.ID)
	e.dc.InjectMessage(e.withFiles(guest, "what is this?", fakediscord.Attachment{Filename: "shot.png", ContentType: "image/png", Data: pngBytes}))
	e.waitSent(t, ch, fakeoai.DefaultAnswer)
	gatewaytest.CheckImageTurn(t, e.waitModel(t, 0), "what is this?", pngBytes)
	if d := e.dc.Downloads(); len(d) != 1 || !d[0].Served {
		t.Errorf("downloads %+v, want one", d)
	}
	e.noTokenSent(t)
}

func TestE2EDocumentLandsUnderASanitisedName(t *testing.T) {
	e := startE2E(t)
	ch := e.dc.DMChannel(guest.ID)
	for i, name := range gatewaytest.SanitisedNames() {
		data := gatewaytest.SanitisedData(i, name)
		e.dc.InjectMessage(e.withFiles(guest, "", fakediscord.Attachment{Filename: name, ContentType: "text/plain", Data: data}))
		gatewaytest.CheckSaved(t, e.workspace, e.waitModel(t, i).LastUser(), "inbox/discord-"+ch, name, data)
	}
	gatewaytest.CheckNothingEscaped(t, e.workspace)
	e.noTokenSent(t)
}

func TestE2EAttachmentOverMaxBytesIsNotDownloaded(t *testing.T) {
	e := startE2EWith(t, func(c *config.Config) { c.Attachments.MaxBytes = 1000 })
	ch := e.dc.DMChannel(guest.ID)
	e.dc.InjectMessage(e.withFiles(guest, "", fakediscord.Attachment{Filename: "big.log", Data: bytes.Repeat([]byte("x"), 5000)}))
	if got := e.waitSent(t, ch, "the limit is 1000 bytes"); !strings.Contains(got.Content, "4.9 KiB") {
		t.Errorf("the refusal does not name the size: %q", got.Content)
	}
	if d := e.dc.Downloads(); len(d) != 0 {
		t.Errorf("downloads %+v: want none", d)
	}
	// A file announced small that turns out big is cut while read.
	e.dc.InjectMessage(e.withFiles(guest, "and this", fakediscord.Attachment{Filename: "small.log", Size: 10, Data: bytes.Repeat([]byte("y"), 5000)}))
	e.waitSent(t, ch, "over the limit of 1000 bytes")
	e.waitSent(t, ch, fakeoai.DefaultAnswer) // the text is still handled
	entries, _ := os.ReadDir(filepath.Join(e.workspace, "inbox", "discord-"+ch))
	if len(entries) != 0 {
		t.Errorf("stored: %v", entries)
	}
}

func TestE2EStrangersAttachmentIsNeverDownloaded(t *testing.T) {
	e := startE2E(t)
	file := fakediscord.Attachment{Filename: "plans.txt", Data: []byte("secret plans")}
	e.dc.InjectMessage(e.withFiles(stranger, "read this", file))
	e.dc.InjectMessage(e.withFiles(stranger, "", file))
	// An allowed user's file in a guild message that does not address the bot.
	e.dc.InjectMessage(fakediscord.Message{ChannelID: team, GuildID: guild, Author: guest, Content: "look", Attachments: []fakediscord.Attachment{file}})
	ch := e.dc.DMChannel(guest.ID)
	e.dc.InjectMessage(fakediscord.Message{ChannelID: ch, Author: guest, Content: "marker"})
	e.waitSent(t, ch, fakeoai.DefaultAnswer)
	if d := e.dc.Downloads(); len(d) != 0 {
		t.Errorf("downloads %+v: want none", d)
	}
	gatewaytest.CheckModelSawOnly(t, e.ai, "marker")
}

// TestE2EAttachmentOffTheCDNIsRefused: an attachment URL on another host
// is never requested, and a CDN redirect to another host is not followed;
// both are reported and the text is still handled; neither URL is logged.
func TestE2EAttachmentOffTheCDNIsRefused(t *testing.T) {
	other := gatewaytest.StartOtherHost(t)
	e := startE2E(t)
	ch := e.dc.DMChannel(guest.ID)
	e.dc.InjectMessage(e.withFiles(guest, "keep this", fakediscord.Attachment{Filename: "a.txt", URL: other.URL + "/attachments/1/2/a.txt?hm=sig", Size: 4}))
	e.waitSent(t, ch, "could not download")
	e.waitSent(t, ch, fakeoai.DefaultAnswer)
	e.dc.RedirectAttachments(other.URL)
	e.dc.InjectMessage(e.withFiles(guest, "and this", fakediscord.Attachment{Filename: "b.txt", Data: []byte("data")}))
	testutil.WaitFor(t, "two refusals", func() bool { return countSent(e, ch, "could not download") == 2 })
	other.CheckNotAsked(t)
	if d := e.dc.Downloads(); len(d) != 1 || d[0].Served {
		t.Errorf("downloads %+v, want the one redirected", d)
	}
	e.noTokenSent(t)
	if logs := e.logs.String(); strings.Contains(logs, other.URL) || strings.Contains(logs, "hm=") {
		t.Errorf("an attachment URL is in the log:\n%s", logs)
	}
}

func countSent(e *e2e, ch, want string) int {
	n := 0
	for _, s := range e.dc.Messages(ch) {
		if strings.Contains(s.Content, want) {
			n++
		}
	}
	return n
}

// TestE2EVoiceMessageIsTranscribed: a Discord voice message (an audio/ogg
// attachment on a message flagged IS_VOICE_MESSAGE) goes to the
// transcription endpoint; the transcript reaches the model as the user's
// words and is quoted to the user before the answer.
func TestE2EVoiceMessageIsTranscribed(t *testing.T) {
	e := startE2EWith(t, func(c *config.Config) {
		c.LLM.Transcribe = config.Transcribe{Provider: "fake", Model: "whisper-1", Timeout: config.Duration(10 * time.Second)}
	})
	e.ai.SetTranscript("remind me to buy milk")
	ch := e.dc.DMChannel(guest.ID)
	voice := []byte("OggS\x00fake opus voice message")
	m := e.withFiles(guest, "", fakediscord.Attachment{Filename: "voice-message.ogg", ContentType: "audio/ogg", Data: voice})
	m.Flags = int(discordgo.MessageFlagsIsVoiceMessage)
	e.dc.InjectMessage(m)
	e.waitSent(t, ch, fakeoai.DefaultAnswer)
	gatewaytest.CheckTranscribed(t, e.ai, voice, "whisper-1")
	if user := e.waitModel(t, 0).LastUser(); !strings.Contains(user, "[transcript of the voice above, the user's words] remind me to buy milk") {
		t.Errorf("the model saw %q", user)
	}
	var sent []string
	for _, s := range e.dc.Messages(ch) {
		sent = append(sent, s.Content)
	}
	gatewaytest.CheckQuotedBefore(t, sent, "remind me to buy milk", fakeoai.DefaultAnswer)
	e.noTokenSent(t)
}
