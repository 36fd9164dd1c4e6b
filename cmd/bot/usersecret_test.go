package main

import (
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// TestUserTypedSecretsAreRedacted: a user pastes the configured Telegram
// token and the provider's API key into the chat, raw and encoded. Neither
// the request the LLM receives, nor the database, nor the debug logs hold
// any of them; the message itself still reaches the LLM, masked.
func TestUserTypedSecretsAreRedacted(t *testing.T) {
	t.Parallel()
	const (
		apiKey   = "pk-user-typed-Hq4Tz8Lm2Wc"                    // llm.providers[0].api_key
		tgToken  = "123456789:AAUserTypedTokenUserTypedToken0042" // gateways.telegram.token (disabled)
		greeting = "MODEL: noted."
	)
	pasted := map[string]string{
		"api key":                    apiKey,
		"telegram token":             tgToken,
		"api key base64":             base64.StdEncoding.EncodeToString([]byte(apiKey)),
		"api key base64url unpadded": base64.RawURLEncoding.EncodeToString([]byte(apiKey)),
		"basic auth with the token":  base64.StdEncoding.EncodeToString([]byte("bot:" + tgToken)),
		"token in a base64 blob":     base64.StdEncoding.EncodeToString([]byte(`{"t":"` + tgToken + `"}`)),
		"api key hex":                hex.EncodeToString([]byte(apiKey)),
		"token HEX":                  strings.ToUpper(hex.EncodeToString([]byte(tgToken))),
		"token query-escaped":        url.QueryEscape(tgToken),
		"token path-escaped":         url.PathEscape(tgToken),
	}
	var msg strings.Builder
	msg.WriteString("please keep these:")
	for name, v := range pasted {
		msg.WriteString(" " + name + "=" + v)
	}
	srv := startFake(t, func(fakeopenai.Request) fakeopenai.Step { return fakeopenai.Text(greeting) })
	dir := t.TempDir()
	cfg := strings.Replace(fakeConfig(srv.URL(), apiKey, shellApprove, "debug"),
		"  console: {enabled: true}\n",
		"  console: {enabled: true}\n  telegram: {enabled: false, token: \"${TG_TOKEN_FOR_TEST}\"}\n", 1)
	writeFile(t, dir, "config.yaml", cfg)
	p := startBot(t, dir, baseEnv(dir, "TG_TOKEN_FOR_TEST="+tgToken))
	p.send(msg.String())
	expectLine(t, p, greeting)
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; want 0", code)
	}

	reqs := srv.Requests()
	if len(reqs) == 0 || reqs[0].Authorization != "Bearer "+apiKey {
		t.Fatal("the provider did not use the configured api_key, so this test proves nothing")
	}
	sawMessage := false
	for i, r := range reqs {
		for _, m := range r.Messages {
			if m.Role == "user" && strings.HasPrefix(m.Content, "please keep these:") {
				sawMessage = true
				if !strings.Contains(m.Content, "[REDACTED]") {
					t.Errorf("request %d: the user's message is not masked: %q", i, m.Content)
				}
			}
			for name, v := range pasted {
				if strings.Contains(m.Content, v) {
					t.Errorf("request %d: the LLM was sent the %s: %q", i, name, m.Content)
				}
			}
		}
	}
	if !sawMessage {
		t.Fatal("the user's message never reached the LLM")
	}
	files, err := filepath.Glob(filepath.Join(dir, "gatehouse.db*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no database files in %s (%v)", dir, err)
	}
	for _, top := range files {
		// gatehouse.db.blobs/ (workspace checkpoints) is checked file by file.
		err := filepath.WalkDir(top, func(f string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			for name, v := range pasted {
				if strings.Contains(string(b), v) {
					t.Errorf("%s holds the %s", filepath.Base(f), name)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	stderr := p.stderr.String()
	if !strings.Contains(stderr, `"level":"debug"`) {
		t.Fatalf("no debug log lines; the log check proves nothing:\n%s", stderr)
	}
	for name, v := range pasted {
		if strings.Contains(stderr, v) || strings.Contains(p.stdout(), v) {
			t.Errorf("the logs or the chat carry the %s", name)
		}
	}
}
