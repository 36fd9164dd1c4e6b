package app

import (
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/config"
)

func TestProviderSkipped(t *testing.T) {
	tests := []struct {
		name, baseURL, key string
		skipped            bool
	}{
		{"hosted with key", "https://api.openai.com/v1", "sk-x", false},
		{"hosted without key", "https://api.openai.com/v1", "", true},
		{"credentials in base_url", "https://bot:pw@proxy.example.com/v1", "", false},
		{"token in base_url", "https://tok@proxy.example.com/v1", "", false},
		{"loopback without key", "http://127.0.0.1:11434/v1", "", false},
		{"private network without key", "http://192.168.1.5:8080/v1", "", false},
		{"service name without key", "http://ollama:11434/v1", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why := ProviderSkipped(config.Provider{BaseURL: tt.baseURL, APIKey: config.Secret(tt.key)})
			if (why != "") != tt.skipped {
				t.Fatalf("ProviderSkipped = %q; want skipped %v", why, tt.skipped)
			}
			if strings.Contains(why, "pw") {
				t.Errorf("reason %q repeats the credentials", why)
			}
		})
	}
}
