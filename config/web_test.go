package config

import (
	"errors"
	"strings"
	"testing"
)

func TestWebConsoleErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		name, src, key, msg string
	}{
		{"public_url scheme", "http: {public_url: \"ftp://bot.example.com\"}\n", "http.public_url", `"http" or "https"`},
		{"public_url path", "http: {public_url: \"https://bot.example.com/bot\"}\n", "http.public_url", "scheme://host"},
		{"public_url query", "http: {public_url: \"https://bot.example.com/?a=1\"}\n", "http.public_url", "scheme://host"},
		{"session too short", "http: {console_session: 10s}\n", "http.console_session", "between 1m"},
		{"session too long", "http: {console_session: 9000h}\n", "http.console_session", "between 1m"},
		{"console without listen", "http: {listen: \"\", console: true}\n", "http.console", "http.listen"},
		{"every address, no public_url", "http: {listen: \"0.0.0.0:9090\", console: true}\n", "http.public_url", "every address"},
		{"not a bool", "http: {console: maybe}\n", "http.console", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), noEnv, specs())
			e, ok := errors.AsType[*Error](err)
			if !ok {
				t.Fatalf("Parse = %v; want *Error", err)
			}
			if e.Key != tt.key || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("got Key=%q Msg=%q\nwant Key=%q Msg~%q", e.Key, e.Msg, tt.key, tt.msg)
			}
		})
	}
	c := mustParse(t, "http: {listen: \"0.0.0.0:9090\", console: true, public_url: \"https://bot.example.com\"}\n", noEnv)
	if !c.HTTP.Console || c.HTTP.ConsoleSession.D().Hours() != 12 {
		t.Errorf("HTTP = %+v; want the console on, a 12h session", c.HTTP)
	}
}
