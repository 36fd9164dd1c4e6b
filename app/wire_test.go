package app

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
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

// TestAllowListsFromTheTable: each gateway's allow list is what its section
// says; the console's is its one local person.
func TestAllowListsFromTheTable(t *testing.T) {
	cfg, err := config.Parse([]byte(`
gateways:
  telegram: {allow: ['42', 'telegram:-100']}
  discord: {allow: ['80351110224678912']}
  slack: {allow: [U0123ABCD]}
`), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	if err != nil {
		t.Fatal(err)
	}
	got := allowLists(cfg)
	want := map[string][]string{
		"console":  {"console:local"},
		"telegram": {"42", "telegram:-100"},
		"discord":  {"80351110224678912"},
		"slack":    {"U0123ABCD"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("allowLists = %v, want %v", got, want)
	}
}

// TestRestartKeysPassOverEveryPrice: Reload applies every provider's
// price (each prices its own requests), so a change to any of them needs
// no restart; another key of a provider still does.
func TestRestartKeysPassOverEveryPrice(t *testing.T) {
	parse := func(p0, p1, model string) *config.Config {
		t.Helper()
		cfg, err := config.Parse([]byte(`
llm:
  providers:
    - {name: a, base_url: "http://127.0.0.1:1/v1", model: m, price: {input_per_mtok: `+p0+`, output_per_mtok: 1}}
    - {name: b, base_url: "http://127.0.0.1:2/v1", model: `+model+`, `+p1+`}
`), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	running := parse("1", "price: {input_per_mtok: 1, output_per_mtok: 1}", "m")
	for _, next := range []*config.Config{
		parse("2", "price: {input_per_mtok: 1, output_per_mtok: 1}", "m"),
		parse("1", "price: {input_per_mtok: 2, output_per_mtok: 1}", "m"),
		parse("1", "stream: false", "m"), // the price removed
	} {
		if got := restartKeys(running, next); len(got) != 0 {
			t.Errorf("a price changed: restart keys %q; want none (prices are applied)", got)
		}
	}
	if got := restartKeys(running, parse("1", "price: {input_per_mtok: 2, output_per_mtok: 1}", "other")); !reflect.DeepEqual(got, []string{"llm.providers[1].model"}) {
		t.Errorf("second provider's model and price changed: restart keys %q; want only the model named", got)
	}
}
