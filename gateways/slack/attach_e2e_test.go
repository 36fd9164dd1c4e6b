package slack_test

// End-to-end tests of attachments: files shared on Slack through the
// unmodified slack-go and the fake Slack (Socket Mode, url_private_download
// behind the bot token), saved by attach, seen by the fake OpenAI
// server.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

var pngBytes = gatewaytest.PNG()

func startAttachE2E(t *testing.T, tune func(*config.Config)) *e2e {
	t.Helper()
	return startE2ETuned(t, fakeslack.Options{}, "", tune)
}

// waitModel waits for the n-th request to the model and returns it.
func (e *e2e) waitModel(t *testing.T, n int) fakeoai.Request {
	t.Helper()
	return gatewaytest.WaitRequest(t, e.ai, n)
}

// share is a DM from user sharing files with text.
func (e *e2e) share(user, text string, files ...fakeslack.File) string {
	return e.sl.InjectMessage(fakeslack.Event{Channel: fakeslack.DMChannel(user), User: user, Text: text, Files: files})
}

// bearerOnly fails when a download came without the bot token, or when
// a file URL is in the log.
func (e *e2e) bearerOnly(t *testing.T) {
	t.Helper()
	if logs := e.logs.String(); strings.Contains(logs, "/files-pri/") {
		t.Errorf("a file URL is in the log:\n%s", logs)
	}
	for _, d := range e.sl.FileDownloads() {
		if d.Authorization != "Bearer "+e2eBotToken {
			t.Errorf("a file download carried Authorization %q", d.Authorization)
		}
	}
}

func TestE2EImageWithTextReachesAVisionProvider(t *testing.T) {
	e := startAttachE2E(t, func(c *config.Config) { c.LLM.Providers[0].Vision = true })
	e.share(guest, "what is this?", fakeslack.File{Name: "shot.png", Mimetype: "image/png", Data: pngBytes})
	e.waitPost(t, fakeslack.DMChannel(guest), fakeoai.DefaultAnswer)
	gatewaytest.CheckImageTurn(t, e.waitModel(t, 0), "what is this?", pngBytes)
	if d := e.sl.FileDownloads(); len(d) != 1 || !d[0].Served {
		t.Errorf("downloads %+v, want one", d)
	}
	e.bearerOnly(t)
}

func TestE2EDocumentLandsUnderASanitisedName(t *testing.T) {
	e := startAttachE2E(t, nil)
	dm := fakeslack.DMChannel(guest)
	for i, name := range gatewaytest.SanitisedNames() {
		data := gatewaytest.SanitisedData(i, name)
		e.share(guest, "", fakeslack.File{Name: name, Mimetype: "text/plain", Data: data})
		gatewaytest.CheckSaved(t, e.workspace, e.waitModel(t, i).LastUser(), "inbox/slack-"+dm, name, data)
	}
	gatewaytest.CheckNothingEscaped(t, e.workspace)
	e.bearerOnly(t)
}

func TestE2EAttachmentOverMaxBytesIsNotDownloaded(t *testing.T) {
	e := startAttachE2E(t, func(c *config.Config) { c.Attachments.MaxBytes = 1000 })
	dm := fakeslack.DMChannel(guest)
	e.share(guest, "", fakeslack.File{Name: "big.log", Data: bytes.Repeat([]byte("x"), 5000)})
	if got := e.waitPost(t, dm, "the limit is 1000 bytes"); !strings.Contains(got.Text, "4.9 KiB") {
		t.Errorf("the refusal does not name the size: %q", got.Text)
	}
	if d := e.sl.FileDownloads(); len(d) != 0 {
		t.Errorf("downloads %+v: want none", d)
	}
	// A file announced small that turns out big is cut while read.
	e.share(guest, "and this", fakeslack.File{Name: "small.log", Size: 10, Data: bytes.Repeat([]byte("y"), 5000)})
	e.waitPost(t, dm, "over the limit of 1000 bytes")
	e.waitPost(t, dm, fakeoai.DefaultAnswer) // the text is still handled
	entries, _ := os.ReadDir(filepath.Join(e.workspace, "inbox", "slack-"+dm))
	if len(entries) != 0 {
		t.Errorf("stored: %v", entries)
	}
}

func TestE2EStrangersAttachmentIsNeverDownloaded(t *testing.T) {
	e := startAttachE2E(t, nil)
	file := fakeslack.File{Name: "plans.txt", Data: []byte("secret plans")}
	e.share(stranger, "read this", file)
	e.share(stranger, "", file)
	e.sl.InjectMessage(fakeslack.Event{Type: "app_mention", Channel: channel, User: stranger, Text: "<@U0BOT> read this", Files: []fakeslack.File{file}})
	e.sl.InjectDM(guest, "marker")
	e.waitPost(t, fakeslack.DMChannel(guest), fakeoai.DefaultAnswer)
	if d := e.sl.FileDownloads(); len(d) != 0 {
		t.Errorf("downloads %+v: want none", d)
	}
	gatewaytest.CheckModelSawOnly(t, e.ai, "marker")
}

// TestE2EFileOnAnotherHostIsRefusedWithoutTheToken: a url_private_download
// on another host (another port of 127.0.0.1) is never requested, so the
// token never reaches it; a redirect from the file host to another host is
// not followed. Both are reported, the text is still handled, and neither
// URL is logged.
func TestE2EFileOnAnotherHostIsRefusedWithoutTheToken(t *testing.T) {
	other := gatewaytest.StartOtherHost(t)
	e := startAttachE2E(t, nil)
	dm := fakeslack.DMChannel(guest)
	e.share(guest, "keep this", fakeslack.File{Name: "a.txt", Size: 4, URLPrivateDownload: other.URL + "/files-pri/T0FAKE-F1/download/a.txt"})
	e.waitPost(t, dm, "could not download")
	e.waitPost(t, dm, fakeoai.DefaultAnswer)
	e.sl.RedirectFiles(other.URL)
	e.share(guest, "and this", fakeslack.File{Name: "b.txt", Data: []byte("data")})
	testutil.WaitFor(t, "two refusals", func() bool {
		n := 0
		for _, p := range e.sl.Posts(dm) {
			if strings.Contains(p.Text, "could not download") {
				n++
			}
		}
		return n == 2
	})
	other.CheckNotAsked(t)
	if d := e.sl.FileDownloads(); len(d) != 1 || d[0].Served {
		t.Errorf("downloads %+v, want the one redirected", d)
	}
	e.bearerOnly(t)
	if logs := e.logs.String(); strings.Contains(logs, other.URL) || strings.Contains(logs, "/files-pri/") {
		t.Errorf("a file URL is in the log:\n%s", logs)
	}
}

// TestE2EAudioClipIsTranscribed: an audio clip recorded in Slack (subtype
// slack_audio, media_display_type audio) goes to the transcription
// endpoint, also when Slack announces it as video/webm or video/mp4; the
// transcript reaches the model as the user's words and is quoted to the
// user before the answer.
func TestE2EAudioClipIsTranscribed(t *testing.T) {
	for _, mimetype := range []string{"audio/mp4", "video/webm"} {
		t.Run(strings.ReplaceAll(mimetype, "/", "-"), func(t *testing.T) {
			e := startAttachE2E(t, func(c *config.Config) {
				c.LLM.Transcribe = config.Transcribe{Provider: "fake", Model: "whisper-1", Timeout: config.Duration(10 * time.Second)}
			})
			e.ai.SetTranscript("remind me to buy milk")
			ch := fakeslack.DMChannel(guest)
			clip := []byte("\x1a\x45\xdf\xa3 fake audio clip")
			e.share(guest, "", fakeslack.File{Name: "audio_message.webm", Mimetype: mimetype, Data: clip,
				Subtype: "slack_audio", MediaDisplayType: "audio"})
			e.waitPost(t, ch, fakeoai.DefaultAnswer)
			gatewaytest.CheckTranscribed(t, e.ai, clip, "whisper-1")
			if user := e.waitModel(t, 0).LastUser(); !strings.Contains(user, "[transcript of the audio above, the user's words] remind me to buy milk") {
				t.Errorf("the model saw %q", user)
			}
			var sent []string
			for _, p := range e.sl.Posts(ch) {
				sent = append(sent, p.Text)
			}
			gatewaytest.CheckQuotedBefore(t, sent, "remind me to buy milk", fakeoai.DefaultAnswer)
			e.bearerOnly(t)
		})
	}
}

// TestE2ETranscriptionCountsInBudgets: the tokens a transcription reports
// (usage of type "tokens", as gpt-4o-transcribe answers) are recorded to
// the conversation like a model's answer, so budget.daily_tokens counts
// them: past the cap, the turn of that very message is refused. A usage
// reported only as a duration has no tokens and is not counted.
func TestE2ETranscriptionCountsInBudgets(t *testing.T) {
	clip := fakeslack.File{Name: "audio_message.m4a", Mimetype: "audio/mp4", Data: []byte("\x00\x00\x00\x1cftypM4A clip"),
		Subtype: "slack_audio", MediaDisplayType: "audio"}
	start := func(t *testing.T, u *fakeoai.TranscriptionUsage) *e2e {
		e := startAttachE2E(t, func(c *config.Config) {
			c.LLM.Transcribe = config.Transcribe{Provider: "fake", Model: "gpt-4o-transcribe", Timeout: config.Duration(10 * time.Second)}
			c.Budget.DailyTokens = 1000
		})
		e.ai.SetTranscriptionUsage(u)
		return e
	}
	ch := fakeslack.DMChannel(guest)
	t.Run("tokens", func(t *testing.T) {
		e := start(t, &fakeoai.TranscriptionUsage{Type: "tokens", InputTokens: 1500, OutputTokens: 20, TotalTokens: 1520})
		e.share(guest, "", clip)
		refused := e.waitPost(t, ch, "budget.daily_tokens")
		if !strings.Contains(refused.Text, "used today: 1520 tokens") {
			t.Errorf("the refusal does not count the transcription's tokens: %q", refused.Text)
		}
		if n := len(e.ai.Transcriptions()); n != 1 {
			t.Errorf("%d transcriptions, want 1", n)
		}
		if reqs := e.ai.Requests(); len(reqs) != 0 {
			t.Errorf("the model was asked %d times over the budget", len(reqs))
		}
	})
	t.Run("duration", func(t *testing.T) {
		e := start(t, &fakeoai.TranscriptionUsage{Type: "duration", Seconds: 4000})
		e.share(guest, "", clip)
		e.waitPost(t, ch, fakeoai.DefaultAnswer)
		if strings.Contains(e.logs.String(), "budget reached") {
			t.Error("a duration was counted as tokens")
		}
		if !strings.Contains(e.logs.String(), "not counted in budgets") {
			t.Errorf("the duration-only usage was not logged:\n%s", e.logs.String())
		}
	})
}
