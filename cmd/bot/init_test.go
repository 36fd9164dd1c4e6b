package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// initKey is the LLM key the tests give bot init.
const initKey = "sk-init-test-key-0123456789abcdef"

// initFakes are a fake Bot API and a fake OpenAI server for bot init and
// for the bot it configures.
type initFakes struct {
	tg  *faketg.Server
	llm *fakeopenai.Server
}

func startInitFakes(t *testing.T) initFakes {
	t.Helper()
	tg := faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	t.Cleanup(tg.Close)
	llm := startFake(t, func(fakeopenai.Request) fakeopenai.Step { return fakeopenai.Text("MODEL: ok.") })
	return initFakes{tg: tg, llm: llm}
}

// initArgs point bot init's Telegram at the fake and turn off the HTTP
// server (parallel bots would share its port).
func (f initFakes) initArgs(extra ...string) []string {
	return append([]string{"init", "-api-url", "telegram=" + f.tg.URL(), "-http-listen="}, extra...)
}

// checkWritten checks the files bot init wrote in dir: config.yaml names
// the secrets as ${VAR} and holds none, .env holds them with mode 0600;
// then `bot doctor` accepts the configuration and `bot` runs on it with
// no secret in its environment (it reads .env), answering the approver
// on Telegram through the model.
func (f initFakes) checkWritten(t *testing.T, dir string, output string) {
	t.Helper()
	secrets := []string{f.tg.Token(), strings.SplitN(f.tg.Token(), ":", 2)[1], initKey}
	cfg := readFile(t, filepath.Join(dir, "config.yaml"))
	for _, s := range secrets {
		if strings.Contains(cfg, s) {
			t.Errorf("config.yaml holds the secret %q:\n%s", s, cfg)
		}
		if strings.Contains(output, s) {
			t.Errorf("bot init printed the secret %q:\n%s", s, output)
		}
	}
	for _, ref := range []string{"${TELEGRAM_BOT_TOKEN}", "${OPENAI_API_KEY}", `"telegram:42"`} {
		if !strings.Contains(cfg, ref) {
			t.Errorf("config.yaml does not hold %s:\n%s", ref, cfg)
		}
	}
	envPath := filepath.Join(dir, ".env")
	fi, err := os.Stat(envPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf(".env has mode %#o, want 0600", fi.Mode().Perm())
	}
	env := readFile(t, envPath)
	for _, want := range []string{"TELEGRAM_BOT_TOKEN=" + f.tg.Token() + "\n", "OPENAI_API_KEY=" + initKey + "\n"} {
		if !strings.Contains(env, want) {
			t.Errorf(".env does not hold %q:\n%s", want, env)
		}
	}

	doc := runOnce(t, dir, baseEnv(dir), "", "doctor", "-config", "config.yaml")
	if doc.code != exitOK {
		t.Fatalf("bot doctor on what bot init wrote: exit %d\n%s%s", doc.code, doc.stdout, doc.stderr)
	}
	if !strings.Contains(doc.stdout, "telegram: enabled") || !strings.Contains(doc.stdout, "model fake-model") {
		t.Errorf("bot doctor does not show Telegram enabled and the fake model:\n%s", doc.stdout)
	}

	p := startBot(t, dir, baseEnv(dir), "-config", "config.yaml")
	u := faketg.User{ID: 42, FirstName: "Approver"}
	f.tg.InjectMessage(faketg.Message{From: &u, Chat: faketg.Chat{ID: 42, Type: "private"}, Text: "hello"})
	testutil.WaitFor(t, "the model's answer sent on Telegram", func() bool {
		for _, s := range f.tg.Sent() {
			if s.ChatID == 42 && strings.Contains(s.Plain, "MODEL: ok.") {
				return true
			}
		}
		return false
	})
	for _, s := range secrets {
		if strings.Contains(p.stderr.String(), s) {
			t.Errorf("the bot logged the secret %q", s)
		}
	}
}

// termCmd is a command on a fresh pseudo-terminal as its controlling
// terminal and its stdin, stdout and stderr.
type termCmd struct {
	termBot
}

// startTermCmd starts the bot binary with args in dir on a fresh
// pseudo-terminal.
func startTermCmd(t *testing.T, dir string, env []string, args ...string) *termCmd {
	t.Helper()
	master, slave := testutil.OpenPTY(t)
	b := &termCmd{termBot{t: t, master: master, out: &testutil.SyncBuffer{}, copied: make(chan struct{}), done: make(chan struct{})}}
	b.cmd = exec.Command(botBin, args...)
	b.cmd.Dir, b.cmd.Env = dir, env
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	b.cmd.Stdin, b.cmd.Stdout, b.cmd.Stderr = slave, slave, slave
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	go func() { io.Copy(b.out, master); close(b.copied) }() // ends with EIO once the process is gone
	go func() { b.err = b.cmd.Wait(); close(b.done) }()
	t.Cleanup(func() {
		select {
		case <-b.done:
		default:
			b.cmd.Process.Kill()
			<-b.done
		}
		master.Close()
	})
	return b
}

// echoing reports whether the terminal echoes what is typed.
func (b *termCmd) echoing() bool {
	b.t.Helper()
	tio, err := unix.IoctlGetTermios(int(b.master.Fd()), unix.TCGETS)
	if err != nil {
		b.t.Fatal(err)
	}
	return tio.Lflag&unix.ECHO != 0
}

// TestInitOnATerminal: bot init answered on a terminal, question by
// question: the token and the key are not echoed (the terminal's echo is
// off while they are typed and on again after), the token is checked
// online (getMe, the bot's name shown) and so is the key (GET /models).
// What it writes passes bot doctor and runs the bot.
func TestInitOnATerminal(t *testing.T) {
	t.Parallel()
	f := startInitFakes(t)
	dir := t.TempDir()
	b := startTermCmd(t, dir, baseEnv(dir, "TERM=xterm"), f.initArgs()...)

	b.expect("Gateways to enable", 1)
	b.typeIn("telegram\r")
	b.expect("Telegram bot token", 1)
	// The prompt is written just before the echo goes off.
	testutil.WaitFor(t, "the terminal's echo off while the token is asked", func() bool { return !b.echoing() })
	b.typeIn(f.tg.Token() + "\r")
	b.expect("Checked: telegram: getMe ok", 1)
	b.expect("@gatehouse_bot", 1)
	b.expect("LLM provider", 1)
	if !b.echoing() {
		t.Error("the terminal's echo is not back on after the token")
	}
	b.typeIn("1\r")
	b.expect("Base URL", 1)
	b.typeIn(f.llm.URL() + "\r")
	b.expect("Model [", 1)
	b.typeIn("fake-model\r")
	b.expect("API key", 1)
	b.typeIn(initKey + "\r")
	b.expect("Checked: GET /models ok", 1)
	b.expect("/whoami", 1)
	b.expect("Approvers, comma-separated", 1)
	b.typeIn("telegram:42\r")
	if code := b.exit(); code != 0 {
		t.Fatalf("bot init: exit %d\n%s", code, b.out.String())
	}
	<-b.copied
	f.checkWritten(t, dir, b.out.String())
}

// TestInitFromPipedAnswers: the same answers piped, one a line; bot init
// writes the same working files. The end of input takes the remaining
// defaults.
func TestInitFromPipedAnswers(t *testing.T) {
	t.Parallel()
	f := startInitFakes(t)
	dir := t.TempDir()
	answers := strings.Join([]string{"telegram", f.tg.Token(), "1", f.llm.URL(), "fake-model", initKey, "telegram:42"}, "\n") + "\n"
	r := runOnce(t, dir, baseEnv(dir), answers, f.initArgs()...)
	if r.code != exitOK {
		t.Fatalf("bot init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "Checked: telegram: getMe ok") || !strings.Contains(r.stdout, "Checked: GET /models ok") {
		t.Errorf("the token and the key were not checked online:\n%s", r.stdout)
	}
	f.checkWritten(t, dir, r.stdout+r.stderr)
}

// TestInitYes: -yes asks nothing: the gateways, the approver and the LLM
// come from flags, the token and the key from the environment variables
// config.yaml names, written to .env and not to config.yaml. A gateway
// named without its token in the environment is a usage error.
func TestInitYes(t *testing.T) {
	t.Parallel()
	f := startInitFakes(t)
	dir := t.TempDir()
	env := baseEnv(dir, "TELEGRAM_BOT_TOKEN="+f.tg.Token(), "OPENAI_API_KEY="+initKey)
	r := runOnce(t, dir, env, "", f.initArgs("-yes", "-gateways", "telegram", "-approver", "telegram:42",
		"-llm-base-url", f.llm.URL(), "-llm-model", "fake-model")...)
	if r.code != exitOK {
		t.Fatalf("bot init -yes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "[") {
		t.Errorf("bot init -yes asked a question:\n%s", r.stdout)
	}
	f.checkWritten(t, dir, r.stdout+r.stderr)

	other := t.TempDir()
	r = runOnce(t, other, baseEnv(other), "", "init", "-yes", "-gateways", "slack")
	if r.code != exitConfig || !strings.Contains(r.stderr, "SLACK_BOT_TOKEN is not set") {
		t.Errorf("bot init -yes -gateways slack without its tokens: exit %d, stderr %q; want %d naming SLACK_BOT_TOKEN", r.code, r.stderr, exitConfig)
	}
	if _, err := os.Stat(filepath.Join(other, "config.yaml")); !os.IsNotExist(err) {
		t.Errorf("a refused bot init wrote config.yaml (%v)", err)
	}
}

// TestInitNeverOverwritesWithoutAsking: an existing config.yaml is
// replaced only when the user answers yes; the default (Enter, the end of
// piped input) and -yes leave it as it was and write nothing.
func TestInitNeverOverwritesWithoutAsking(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const mine = "# my own configuration\n"
	path := writeFile(t, dir, "config.yaml", mine)
	for _, c := range []struct {
		name, input string
		args        []string
	}{
		{"Enter", "\n", nil},
		{"end of input", "", nil},
		{"-yes", "", []string{"-yes"}},
	} {
		r := runOnce(t, dir, baseEnv(dir), c.input, append([]string{"init"}, c.args...)...)
		if r.code != exitFail || !strings.Contains(r.stderr, "exists") {
			t.Errorf("%s: exit %d, stderr %q; want %d saying the file exists", c.name, r.code, r.stderr, exitFail)
		}
		if got := readFile(t, path); got != mine {
			t.Errorf("%s: config.yaml was replaced:\n%s", c.name, got)
		}
		if _, err := os.Stat(filepath.Join(dir, ".env")); !os.IsNotExist(err) {
			t.Errorf("%s: .env written (%v)", c.name, err)
		}
	}
	// yes, then the defaults: the terminal's chat and the demo model.
	r := runOnce(t, dir, baseEnv(dir), "yes\n", "init", "-http-listen=")
	if r.code != exitOK || readFile(t, path) == mine {
		t.Fatalf("answered yes: exit %d, config.yaml replaced: %v\n%s%s", r.code, readFile(t, path) != mine, r.stdout, r.stderr)
	}
	if doc := runOnce(t, dir, baseEnv(dir), "", "doctor"); doc.code != exitOK || !strings.Contains(doc.stdout, "offline demo model") {
		t.Errorf("bot doctor on the defaults: exit %d\n%s", doc.code, doc.stdout)
	}
}

// TestInitGoesOnWhenTheTokenCannotBeChecked: a platform that does not
// answer is said so, and the token is kept.
func TestInitGoesOnWhenTheTokenCannotBeChecked(t *testing.T) {
	t.Parallel()
	dead := faketg.New(faketg.Options{})
	dead.Close()
	dir := t.TempDir()
	env := baseEnv(dir, "TELEGRAM_BOT_TOKEN="+dead.Token())
	r := runOnce(t, dir, env, "", "init", "-yes", "-gateways", "telegram", "-approver", "telegram:42", "-api-url", "telegram="+dead.URL(), "-http-listen=")
	if r.code != exitOK || !strings.Contains(r.stdout, "Could not check it now (telegram: getMe failed after") {
		t.Fatalf("bot init with Telegram unreachable: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, strings.SplitN(dead.Token(), ":", 2)[1]) {
		t.Errorf("the token was printed:\n%s%s", r.stdout, r.stderr)
	}
	if !strings.Contains(readFile(t, filepath.Join(dir, ".env")), dead.Token()) {
		t.Error("the token was not kept in .env")
	}
}

// TestInitCtrlCAtATokenRestoresTheTerminal: Ctrl-C while a token is asked
// (the terminal's echo off) ends bot init, writes nothing and leaves the
// terminal echoing again.
func TestInitCtrlCAtATokenRestoresTheTerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startTermCmd(t, dir, baseEnv(dir, "TERM=xterm"), "init")
	b.expect("Gateways to enable", 1)
	b.typeIn("slack\r")
	b.expect("Slack bot token", 1)
	b.typeIn("xoxb-half")
	b.typeIn("\x03")
	if code := b.exit(); code != exitFail {
		t.Errorf("exit %d after Ctrl-C; want %d:\n%s", code, exitFail, b.out.String())
	}
	if !b.echoing() {
		t.Error("bot init left the terminal without echo")
	}
	for _, name := range []string{"config.yaml", ".env"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s written after Ctrl-C (%v)", name, err)
		}
	}
}

// TestGitignoreCoversDotEnv: the .env bot init writes in a checkout holds
// the tokens: git status must never offer it for a commit.
func TestGitignoreCoversDotEnv(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH")
	}
	dir := t.TempDir()
	writeFile(t, dir, ".gitignore", readFile(t, filepath.Join("..", "..", ".gitignore")))
	if out, err := exec.Command(git, "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	r := runOnce(t, dir, baseEnv(dir, "TELEGRAM_BOT_TOKEN=123456:gitignore-test-token-0123456789abcd"), "", "init", "-yes", "-http-listen=")
	if r.code != exitOK {
		t.Fatalf("bot init -yes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	out, err := exec.Command(git, "-C", dir, "status", "--porcelain", "--untracked-files=all").CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v\n%s", err, out)
	}
	if strings.Contains(string(out), ".env") {
		t.Errorf("git status offers .env for a commit:\n%s", out)
	}
}
