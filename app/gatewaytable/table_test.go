package gatewaytable

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
)

var secretType = reflect.TypeFor[confkit.Secret]()

// fill sets every Secret field under v to a distinct value and every
// string field whose yaml key ends in _url to a URL with a distinct
// password, and returns the secret values planted.
func fill(v reflect.Value, name string) []string {
	var planted []string
	t := v.Type()
	for i := range t.NumField() {
		f, key := v.Field(i), strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		switch {
		case f.Type() == secretType:
			s := fmt.Sprintf("%s-%s-secret-4c0ffee", name, key)
			f.SetString(s)
			planted = append(planted, s)
		case f.Kind() == reflect.String && strings.HasSuffix(key, "_url"):
			pw := fmt.Sprintf("%s-%s-pw-9beef", name, key)
			f.SetString("https://user:" + pw + "@proxy.example.com/")
			planted = append(planted, pw)
		case f.Kind() == reflect.Struct:
			planted = append(planted, fill(f, name+"-"+key)...)
		}
	}
	return planted
}

// TestEverySecretFieldIsRedacted: whatever secret field or URL a gateway's
// section has, Config.Secrets (which feeds the redactor of logs and
// replies) lists its value, and the rendered configuration shows none.
func TestEverySecretFieldIsRedacted(t *testing.T) {
	cfg, err := config.Parse(nil, func(string) (string, bool) { return "", false }, Specs())
	if err != nil {
		t.Fatal(err)
	}
	var planted []string
	for _, name := range cfg.Gateways.Names() {
		planted = append(planted, fill(reflect.ValueOf(cfg.Gateways.Section(name)).Elem(), name)...)
	}
	if len(planted) < 6 {
		t.Fatalf("planted %d secrets; the table's sections hold at least 6 (tokens, webhook secret, URLs)", len(planted))
	}
	got := cfg.Secrets()
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rendered := string(out)
	for _, name := range cfg.Gateways.Names() {
		s := cfg.Gateways.Section(name)
		rendered += fmt.Sprintf(" %v %+v %#v", s, s, s)
	}
	for _, s := range planted {
		if !slices.Contains(got, s) {
			t.Errorf("Secrets() misses %q", s)
		}
		// URLs are plain strings, shown as they are; the redactor built
		// from Secrets() hides their passwords. Secret fields never show.
		if strings.Contains(rendered, s) && !strings.Contains(s, "-pw-") {
			t.Errorf("the rendered configuration shows %q", s)
		}
	}
}

// TestTable: names are unique, every section is a gateways.Section, a
// gateway with secrets names the environment prefix they come from, and
// the shell scrubber's prefixes are every gateway's.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	var prefixes []string
	for _, s := range Specs() {
		if s.Name == "" || seen[s.Name] {
			t.Errorf("gateway name %q empty or repeated", s.Name)
		}
		seen[s.Name] = true
		sec, ok := s.New().(gateways.Section)
		if !ok {
			t.Errorf("%s: section %T is not a gateways.Section", s.Name, s.New())
			continue
		}
		if len(sec.Secrets()) > 0 && len(s.EnvPrefixes) == 0 {
			t.Errorf("%s has secrets but no environment prefix for the shell scrubber", s.Name)
		}
		prefixes = append(prefixes, s.EnvPrefixes...)
	}
	if !slices.Equal(EnvPrefixes(), prefixes) || len(prefixes) < 3 {
		t.Errorf("EnvPrefixes() = %v, want %v", EnvPrefixes(), prefixes)
	}
}

// TestSectionsBuildWhatIsEnabled: a disabled section builds no gateway.
func TestSectionsBuildWhatIsEnabled(t *testing.T) {
	cfg, err := config.Parse([]byte("gateways: {console: {enabled: false}}\n"), func(string) (string, bool) { return "", false }, Specs())
	if err != nil {
		t.Fatal(err)
	}
	sections, err := Sections(cfg.Gateways)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sections {
		gw, err := s.Section.Build(context.Background(), gateways.Deps{Stdin: strings.NewReader("")})
		if gw != nil || err != nil {
			t.Errorf("%s: Build = %v, %v; want nothing built", s.Name, gw, err)
		}
	}
	if UsesTerminal(cfg.Gateways) {
		t.Error("UsesTerminal with the console disabled")
	}
}
