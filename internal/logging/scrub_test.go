package logging

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

func TestScrubLine(t *testing.T) {
	s := &scrubber{secrets: secrets.New("secret-one", `q"uote\d`, "98765432")}
	m := secrets.Mask
	tests := []struct{ in, want string }{
		{`{"message":"plain"}`, `{"message":"plain"}`},
		{`{"message":"a\nb"}`, `{"message":"a\nb"}`},
		{`{"message":"x secret-one y"}`, `{"message":"x ` + m + ` y"}`},
		{`{"secret-one":1}`, `{"` + m + `":1}`},
		{`{"k":"q\"uote\\d"}`, `{"k":"` + m + `"}`},
		{`{"k":"\u0073ecret-one"}`, `{"k":"` + m + `"}`},
		{`{"a":"secret-one","b":"<&> secret-one"}`, `{"a":"` + m + `","b":"<&> ` + m + `"}`},
		{`{"k":"x","n":98765432}`, withheld},
		{`plain text with secret-one`, `plain text with ` + m},
		{`{"unterminated":"secret-one`, `{"unterminated":"` + m},
		{``, ``},
	}
	for _, tt := range tests {
		if got := s.line(tt.in); got != tt.want {
			t.Errorf("line(%s)\n got %s\nwant %s", tt.in, got, tt.want)
		}
		if json.Valid([]byte(tt.in)) && !json.Valid([]byte(s.line(tt.in))) {
			t.Errorf("line(%s) broke the JSON", tt.in)
		}
	}
}

func TestScrubWriteSplitsLines(t *testing.T) {
	var buf bytes.Buffer
	s := &scrubber{out: &buf, secrets: secrets.New("secret-one")}
	in := "{\"a\":\"secret-one\"}\n{\"b\":1}\n"
	n, err := s.Write([]byte(in))
	if err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if want := "{\"a\":\"" + secrets.Mask + "\"}\n{\"b\":1}\n"; buf.String() != want {
		t.Errorf("wrote %q, want %q", buf.String(), want)
	}
}

func FuzzScrubKeepsJSONValid(f *testing.F) {
	f.Add(`{"message":"secret-one"}`, "secret-one")
	f.Add(`{"k":"a\"b\\c"}`, `a"b\c`)
	f.Add(`{"n":123456,"s":"x"}`, "123456")
	f.Fuzz(func(t *testing.T, line, secret string) {
		set := secrets.New(secret)
		out := (&scrubber{secrets: set}).line(line)
		if json.Valid([]byte(line)) && !json.Valid([]byte(out)) {
			t.Fatalf("line(%q) with %q = %q: invalid JSON", line, secret, out)
		}
		// A secret with a bracket can re-form around the mask: not a leak.
		v := strings.TrimSpace(secret)
		if set.Len() > 0 && strings.Contains(out, v) && !strings.ContainsAny(v, "[]") && !strings.Contains(secrets.Mask, v) {
			t.Fatalf("line(%q) with %q = %q: secret left", line, secret, out)
		}
	})
}

// TestScrubEncodedSecrets: a log line carrying a secret base64-, hex- or
// URL-encoded (an Authorization header, a URL, a dumped body) is scrubbed
// like the secret itself.
func TestScrubEncodedSecrets(t *testing.T) {
	const secret = "987654321:AAsecret/tok+en"
	var buf bytes.Buffer
	log := New(&buf, Options{Format: FormatJSON, Secrets: secrets.New(secret)})
	for _, enc := range []string{
		base64.StdEncoding.EncodeToString([]byte("user:" + secret)),
		base64.RawURLEncoding.EncodeToString([]byte(secret)),
		hex.EncodeToString([]byte(secret)),
		strings.ToUpper(hex.EncodeToString([]byte(secret))),
		"https://api.example/bot" + url.PathEscape(secret) + "/getMe",
		"q=" + url.QueryEscape(secret),
	} {
		buf.Reset()
		log.Error().Str("header", "Basic "+enc).Msg("request failed: " + enc)
		out := buf.String()
		if strings.Contains(out, enc) || !strings.Contains(out, secrets.Mask) {
			t.Errorf("log line keeps %q:\n%s", enc, out)
		}
		if !json.Valid([]byte(strings.TrimSpace(out))) {
			t.Errorf("log line is not JSON: %s", out)
		}
	}
}

// TestConsoleLogEscapesControls: the human-readable format prints a
// message as it is, so one quoting a model's words could drive the
// terminal; its control characters are shown escaped.
func TestConsoleLogEscapesControls(t *testing.T) {
	var buf bytes.Buffer
	log := New(&buf, Options{Format: FormatConsole})
	log.Warn().Str("reply", "a\x1b[2Jb").Msg("model said \x1b[2J\rfake\u009b")
	out := buf.String()
	if strings.ContainsAny(out, "\x1b\r\u009b") {
		t.Errorf("console log line emits a control character: %q", out)
	}
	if !strings.Contains(out, `model said \x1b[2J\rfake\u009b`) {
		t.Errorf("console log line does not show the message escaped: %q", out)
	}
}
