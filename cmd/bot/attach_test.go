package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestConsoleAttachSavesTheFile: "/attach PATH" in the console of the real
// binary saves the file byte for byte under workspace/inbox/console-local/,
// and `bot audit -status received -json` lists it with its SHA-256.
func TestConsoleAttachSavesTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t))
	data := "line one\nline two\n"
	src := writeFile(t, dir, "outside/report .log", data)
	p := startBot(t, dir, baseEnv(dir))
	p.send("/attach " + src + " -- please keep this")
	inbox := filepath.Join(dir, "workspace", "inbox", "console-local")
	var saved string
	testutil.WaitFor(t, "the attachment saved", func() bool {
		entries, _ := os.ReadDir(inbox)
		if len(entries) != 1 {
			return false
		}
		saved = filepath.Join(inbox, entries[0].Name())
		b, _ := os.ReadFile(saved)
		return string(b) == data
	})
	if !strings.HasSuffix(saved, "-report .log") {
		t.Errorf("saved as %s", saved)
	}
	p.send("/attach " + filepath.Join(dir, "nope.txt"))
	expectLine(t, p, "cannot attach")
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	sum := sha256.Sum256([]byte(data))
	r := runOnce(t, dir, baseEnv(dir), "", "audit", "-status", "received", "-json")
	if r.code != 0 || !strings.Contains(r.stdout, "sha256:"+hex.EncodeToString(sum[:])) || !strings.Contains(r.stdout, `"attachment"`) {
		t.Fatalf("bot audit exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestDoctorSaysWhatBecomesOfFiles: bot doctor names where received files
// go, which provider sees images and which transcribes voice.
func TestDoctorSaysWhatBecomesOfFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := strings.Replace(offlineConfig(t), "  max_bytes: 20MiB ", "  max_bytes: 5MiB ", 1)
	cfg = strings.Replace(cfg, "  dir: inbox ", "  dir: uploads ", 1)
	cfg = strings.Replace(cfg, "  providers:\n", `  providers:
    - {name: local, base_url: "http://127.0.0.1:1/v1", model: llava, vision: true}
`, 1)
	cfg = strings.Replace(cfg, "  max_steps: 10", "  transcribe: {provider: local, model: whisper-1}\n  max_steps: 10", 1)
	writeFile(t, dir, "config.yaml", cfg)
	r := runOnce(t, dir, baseEnv(dir), "", "doctor")
	for _, want := range []string{
		"no api_key (local server), vision",
		"received files up to 5MiB saved in " + filepath.Join(dir, "workspace", "uploads"),
		"images: up to 4 a message sent to providers with vision (local first)",
		"voice and audio: transcribed by local, model whisper-1",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor (exit %d) lacks %q:\n%s\n%s", r.code, want, r.stdout, r.stderr)
		}
	}
}

// TestSlackFileShareIsSaved: a file shared in a Slack DM reaches the real
// binary through the fake Slack: it is downloaded from
// url_private_download with the bot token as a bearer, saved byte for
// byte under workspace/inbox/slack-<channel>/, audited with its SHA-256,
// the message is answered, and neither token nor the file's URL is in the
// log.
func TestSlackFileShareIsSaved(t *testing.T) {
	t.Parallel()
	const bot, app = "xoxb-1-ATTACH-slack-bot-token", "xapp-1-A0FAKE-ATTACH-slack-app-token"
	sl := fakeslack.New(fakeslack.Options{BotToken: bot, AppToken: app})
	t.Cleanup(sl.Close)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", slackHealthConfig(dir, sl.URL(), ""))
	env := baseEnv(dir, "SLACK_BOT_TOKEN="+bot, "SLACK_APP_TOKEN="+app)
	p := startBot(t, dir, env)
	testutil.WaitFor(t, "the socket mode connection", func() bool { return sl.Connections() == 1 })
	data := "col1,col2\n1,2\n"
	ch := fakeslack.DMChannel("U1")
	sl.InjectMessage(fakeslack.Event{Channel: ch, User: "U1", Text: "here is the export",
		Files: []fakeslack.File{{Name: "../export.csv", Mimetype: "text/csv", Data: []byte(data)}}})
	inbox := filepath.Join(dir, "ws", "inbox", "slack-"+ch)
	var saved string
	testutil.WaitFor(t, "the file saved", func() bool {
		entries, _ := os.ReadDir(inbox)
		if len(entries) != 1 {
			return false
		}
		saved = filepath.Join(inbox, entries[0].Name())
		b, _ := os.ReadFile(saved)
		return string(b) == data
	})
	if !strings.HasSuffix(saved, "-__export.csv") {
		t.Errorf("saved as %s", saved)
	}
	testutil.WaitFor(t, "the answer", func() bool { return len(sl.Posts(ch)) > 0 })
	d := sl.FileDownloads()
	if len(d) != 1 || !d[0].Served || d[0].Authorization != "Bearer "+bot {
		t.Errorf("downloads %+v, want one with the bot token", d)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; want 0", code)
	}
	out := p.stderr.String()
	noSecretIn(t, "the log", out, bot, app, "/files-pri/")
	sum := sha256.Sum256([]byte(data))
	r := runOnce(t, dir, env, "", "audit", "-status", "received", "-json")
	if r.code != 0 || !strings.Contains(r.stdout, "sha256:"+hex.EncodeToString(sum[:])) {
		t.Fatalf("bot audit exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestConsoleAttachCopyIsPrivate is issue 28 item 9 through the binary:
// "/attach" of a 0600 file and of a 0400 one saves copies no wider (0600,
// 0400: before, both were 0644) in directories the bot made 0700 (the
// workspace, inbox/, inbox/console-local/: before, 0755).
func TestConsoleAttachCopyIsPrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t))
	srcs := map[string]os.FileMode{"private.txt": 0o600, "readonly.txt": 0o400}
	for name, mode := range srcs {
		src := writeFile(t, dir, filepath.Join("outside", name), "secret "+name+"\n")
		if err := os.Chmod(src, mode); err != nil {
			t.Fatal(err)
		}
	}
	p := startBot(t, dir, baseEnv(dir))
	for name := range srcs {
		p.send("/attach " + filepath.Join(dir, "outside", name))
	}
	ws := filepath.Join(dir, "workspace")
	inbox := filepath.Join(ws, "inbox", "console-local")
	testutil.WaitFor(t, "both attachments saved", func() bool {
		entries, _ := os.ReadDir(inbox)
		n := 0
		for _, e := range entries {
			_, name, _ := strings.Cut(e.Name(), "-")
			if b, _ := os.ReadFile(filepath.Join(inbox, e.Name())); string(b) == "secret "+name+"\n" {
				n++ // renamed over its reservation, which is empty
			}
		}
		return n == 2
	})
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	entries, err := os.ReadDir(inbox)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		_, name, _ := strings.Cut(e.Name(), "-")
		if want, ok := srcs[name]; !ok || info.Mode().Perm() != want {
			t.Errorf("%s is %v; want the original's %v, at most -rw-------", e.Name(), info.Mode().Perm(), want)
		}
	}
	for _, d := range []string{ws, filepath.Dir(inbox), inbox} {
		info, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o700 {
			t.Errorf("%s is %v; want -rwx------", d, info.Mode().Perm())
		}
	}
}
