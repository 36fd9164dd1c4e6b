package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// The secrets of TestSecretsNeverLeak. None looks like a well-known key
// except the Telegram-shaped one, so the bot must know them to hide them.
const (
	apiKeySecret   = "pk-literal-Qx7Vb2Np9wZ"                         // llm.providers[0].api_key, in the file
	envTokenSecret = "plain-env-secret-4711-kRt"                      // SERVICE_TOKEN, only in the environment
	telegramSecret = "987654321:AAFakeFakeFakeFakeFakeFakeFakeFake12" // TELEGRAM_BOT_TOKEN
)

var allSecrets = []string{apiKeySecret, envTokenSecret, telegramSecret}

// refusedReply is the model's attempt to send secrets to the chat.
const refusedReply = "Here they are: " + apiKeySecret + " and " + envTokenSecret

// TestSecretsNeverLeak: the model runs a shell command that prints a file
// holding the bot's secrets and then tries to reply with the API key. With
// debug JSON logs, no secret reaches stderr, the chat, or what the LLM was
// sent; every signal and action log line carries its conversation.
func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	const trigger = "show me the credentials"
	srv := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		last := lastMessage(r)
		switch {
		case last.Role == "user" && last.Content == trigger:
			return fakeopenai.ToolCalls(fakeopenai.Call{Name: "shell", Args: `{"command":"cat creds.txt"}`})
		case last.Role == "tool":
			return fakeopenai.Text(refusedReply)
		case last.Role == "user" && strings.Contains(last.Content, "reply was not sent"):
			return fakeopenai.Text("MODEL: I cannot share credentials.")
		}
		return fakeopenai.Text("MODEL: ok.")
	})
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fakeConfig(srv.URL(), apiKeySecret, `    - {tool: "*", decision: allow}`, "debug"))
	writeFile(t, dir, "workspace/creds.txt", strings.Join([]string{
		"api_key=" + apiKeySecret, "service=" + envTokenSecret, "telegram=" + telegramSecret, "end-of-creds"}, "\n")+"\n")
	env := baseEnv(dir, "SERVICE_TOKEN="+envTokenSecret, "TELEGRAM_BOT_TOKEN="+telegramSecret)

	p := startBot(t, dir, env)
	p.send(trigger)
	expectLine(t, p, "MODEL: I cannot share credentials.")
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; want 0", code)
	}

	stderr := p.stderr.String()
	for _, s := range allSecrets {
		if strings.Contains(p.stdout(), s) {
			t.Errorf("the chat (stdout) carries secret %q", s)
		}
		if strings.Contains(stderr, s) {
			t.Errorf("the logs (stderr) carry secret %q", s)
		}
	}
	echoes := checkLLMSaw(t, srv.Requests())
	untagged := checkLogLines(t, stderr)

	if echoes > 0 {
		t.Errorf("a reply the secret gate refused went back to the LLM on %d later request(s)", echoes)
	}
	if atRest := dbLeaks(t, dir); len(atRest) > 0 {
		t.Errorf("the database holds a secret: %v", atRest)
	}
	if untagged > 0 {
		t.Errorf("%d signal/action/tool log line(s) carry no \"conv\"", untagged)
	}
}

// checkLLMSaw: what the LLM was sent holds no secret, and the tool result
// it saw is the redacted file (so the command did run). It returns how
// many requests echoed the model's own refused reply; any other secret
// fails the test.
func checkLLMSaw(t *testing.T, reqs []fakeopenai.Request) (echoes int) {
	t.Helper()
	if len(reqs) < 3 {
		t.Fatalf("the fake saw %d requests; want at least 3 (call, refused reply, final)", len(reqs))
	}
	if reqs[0].Authorization != "Bearer "+apiKeySecret {
		t.Fatalf("the provider did not use the configured api_key, so this test proves nothing")
	}
	sawTool := false
	for i, r := range reqs {
		for _, m := range r.Messages {
			text := m.Content
			for _, c := range m.ToolCalls {
				text += "\n" + c.Args
			}
			switch {
			case !leaks(text):
			case m.Role == "assistant" && m.Content == refusedReply && len(m.ToolCalls) == 0:
				echoes++
			default:
				t.Errorf("request %d: a %s message carries a secret: %q", i, m.Role, text)
			}
			if m.Role == "tool" && strings.Contains(m.Content, "end-of-creds") {
				sawTool = true
				if !strings.Contains(m.Content, "[REDACTED]") {
					t.Errorf("request %d: tool output %q is not redacted", i, m.Content)
				}
			}
		}
	}
	if !sawTool {
		t.Errorf("no request carried the output of `cat creds.txt`; the command did not run")
	}
	return echoes
}

// dbLeaks returns the database files in dir (gatehouse.db, -wal, -shm)
// whose bytes hold one of the test's secrets.
func dbLeaks(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "gatehouse.db*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no database files in %s (%v)", dir, err)
	}
	var out []string
	for _, f := range files {
		if info, err := os.Stat(f); err == nil && info.IsDir() {
			// gatehouse.db.blobs/ holds checkpoint copies of workspace files:
			// creds.txt is one, by this test's design, as it is in the
			// workspace itself. The database files are what must stay clean.
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if leaks(string(b)) {
			out = append(out, filepath.Base(f))
		}
	}
	return out
}

// leaks reports whether text holds one of the test's secrets.
func leaks(text string) bool {
	for _, s := range allSecrets {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// checkLogLines: every stderr line is JSON; each log line about a signal
// or an action carries "conv"; debug lines are there (the level applied).
// It returns how many debug "tool run" lines lack "conv" (a known bug, not
// failed here).
func checkLogLines(t *testing.T, stderr string) (untagged int) {
	t.Helper()
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("log line is not JSON: %q", line)
			continue
		}
		counts["level:"+str(m["level"])]++
		msg := str(m["message"])
		_, hasAction := m["action"]
		_, hasTool := m["tool"]
		_, hasKind := m["kind"]
		if msg == "signal" || msg == "act" || hasAction || hasTool || hasKind {
			counts[msg]++
			switch {
			case str(m["conv"]) != "":
			case msg == "tool run" && str(m["level"]) == "debug":
				untagged++
			default:
				t.Errorf("signal/action log line without \"conv\": %s", line)
			}
		}
	}
	if counts["signal"] == 0 || counts["act"] == 0 {
		t.Errorf("no signal or act log lines (counts %v):\n%s", counts, stderr)
	}
	if counts["level:debug"] == 0 {
		t.Errorf("no debug log lines at log.level debug (counts %v)", counts)
	}
	return untagged
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
