package secrets

import "testing"

func TestRedact(t *testing.T) {
	s := New("supersecret-token", "abc", "123456:AAtoken")
	tests := []struct{ in, want string }{
		{"nothing here", "nothing here"},
		{"tok supersecret-token end", "tok " + Mask + " end"},
		{"short abc stays", "short abc stays"},
		{"key sk-abcdefghijklmnopqrstuvwxyz0123", "key " + Mask},
		{"slack xoxb-1234567890-abcdef", "slack " + Mask},
		{"tg 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq", "tg " + Mask},
	}
	for _, tt := range tests {
		if got := s.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if !s.Contains("x supersecret-token") || s.Contains("abc") {
		t.Error("Contains wrong")
	}
	var nilSet *Set
	if nilSet.Redact("plain") != "plain" || nilSet.Contains("x") || nilSet.Len() != 0 {
		t.Error("nil set must hold nothing")
	}
}

func TestSecretEnvName(t *testing.T) {
	for name, want := range map[string]bool{
		"TELEGRAM_BOT_TOKEN": true, "OPENAI_API_KEY": true, "DB_PASSWORD": true,
		"slack_app_token": true, "HOME": false, "PATH": false, "KEYBOARD": false,
	} {
		if got := SecretEnvName(name); got != want {
			t.Errorf("SecretEnvName(%q) = %v, want %v", name, got, want)
		}
	}
	got := FromEnv([]string{"A_TOKEN=x1y2z3w4", "HOME=/root", "B_KEY="})
	if len(got) != 1 || got[0] != "x1y2z3w4" {
		t.Errorf("FromEnv = %q", got)
	}
}

func TestLooksLikeKeyEveryShape(t *testing.T) {
	for _, key := range []string{
		"sk-abcdefghijklmnopqrstuvwxyz0123", "sk-proj-abcdefghijklmnopqrstuvwxyz",
		"xoxb-1234567890-abcdef", "xoxp-1234567890-abcdef", "xapp-1-A0123456789",
		"123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq",
		"ghp_abcdefghijklmnopqrstuvwxyz0123456789", "gho_abcdefghijklmnopqrstuvwxyz0123456789",
		"ghu_abcdefghijklmnopqrstuvwxyz0123456789", "ghs_abcdefghijklmnopqrstuvwxyz0123456789",
		"ghr_abcdefghijklmnopqrstuvwxyz0123456789",
		"AKIAIOSFODNN7EXAMPLE", "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
	} {
		if !LooksLikeKey("x " + key + " y") {
			t.Errorf("LooksLikeKey misses %q", key)
		}
		if got := New().Redact("x " + key + " y"); got != "x "+Mask+" y" {
			t.Errorf("Redact(%q) = %q", key, got)
		}
	}
	if LooksLikeKey("ask-me-anything the skies though right AKIAno") {
		t.Error("LooksLikeKey matches innocent text")
	}
}
