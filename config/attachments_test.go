package config

import (
	"strings"
	"testing"
	"time"
)

// TestAttachmentsConfig: attachments defaults to 20MiB / inbox / 4, takes
// sizes with units, llm.providers[].vision and llm.transcribe decode, and a
// bad value is an error naming its key.
func TestAttachmentsConfig(t *testing.T) {
	const approvers = "\nhitl: {approvers: [console:local]}\n"
	c := mustParse(t, approvers, noEnv)
	if want := (Attachments{MaxBytes: 20 << 20, Dir: "inbox", MaxImages: 4}); c.Attachments != want {
		t.Errorf("defaults %+v, want %+v", c.Attachments, want)
	}
	if c.LLM.Transcribe.Provider != "" {
		t.Errorf("transcribe set by default: %+v", c.LLM.Transcribe)
	}
	c = mustParse(t, `
attachments: {max_bytes: 5 MiB, dir: files/in, max_images: 0}
llm:
  providers: [{name: oa, base_url: "http://127.0.0.1:1/v1", vision: true}, {name: local, base_url: "http://127.0.0.1:2/v1"}]
  transcribe: {provider: local}
`+approvers, noEnv)
	if got := c.Attachments; got.MaxBytes != 5<<20 || got.Dir != "files/in" || got.MaxImages != 0 {
		t.Errorf("set: %+v", got)
	}
	if !c.LLM.Providers[0].Vision || c.LLM.Providers[1].Vision {
		t.Errorf("vision: %+v", c.LLM.Providers)
	}
	if got := c.LLM.Transcribe; got.Provider != "local" || got.Model != "whisper-1" || got.Timeout.D() != time.Minute {
		t.Errorf("transcribe %+v, want local, whisper-1, 60s", got)
	}
	for _, tc := range []struct{ yaml, key string }{
		{"attachments: {max_bytes: 20 parsecs}", "attachments.max_bytes"},
		{"attachments: {max_bytes: 0}", "attachments.max_bytes"},
		{"attachments: {max_bytes: 3GiB}", "attachments.max_bytes"},
		{"attachments: {max_images: 17}", "attachments.max_images"},
		{"attachments: {dir: ../outside}", "attachments.dir"},
		{"attachments: {dir: /etc}", "attachments.dir"},
		{"attachments: {dir: \"\"}", "attachments.dir"},
		{"attachments: {every: 1}", "attachments.every"},
		{"llm: {providers: [{name: a, base_url: \"http://127.0.0.1:1/v1\", vision: maybe}]}", "llm.providers[0].vision"},
		{"llm: {providers: [{name: a, base_url: \"http://127.0.0.1:1/v1\"}], transcribe: {provider: b}}", "llm.transcribe.provider"},
		{"llm: {transcribe: {provider: openai}}", "llm.transcribe.provider"},
		{"llm: {transcribe: {model: whisper-1}}", "llm.transcribe.provider"},
		{"llm: {providers: [{name: a, base_url: \"http://127.0.0.1:1/v1\"}], transcribe: {provider: a, timeout: -1s}}", "llm.transcribe.timeout"},
		{"llm: {transcribe: {speed: 2}}", "llm.transcribe.speed"},
	} {
		_, err := Parse([]byte(tc.yaml+approvers), noEnv, specs())
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: error %v, want one naming %s", tc.yaml, err, tc.key)
		}
	}
}
