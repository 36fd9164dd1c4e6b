package slack_test

import (
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways/slack"
)

func parse(src string) (*config.Config, error) {
	return config.Parse([]byte(src), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
}

func TestSectionKeysAndChecks(t *testing.T) {
	bad := map[string]string{
		"gateways: {slack: {bot_token: xoxb-1}}\n":                                                      "gateways.slack.app_token",
		"gateways: {slack: {bot_token: xoxb-1, mode: events}}\n":                                        "gateways.slack.signing_secret",
		"gateways: {slack: {mode: sockets}}\n":                                                          "gateways.slack.mode",
		"gateways: {slack: {channel: everyone}}\n":                                                      "gateways.slack.channel",
		"gateways: {slack: {bot_token: xoxb-1, signing_secret: s, mode: events}}\nhttp: {listen: ''}\n": "gateways.slack.listen",
		"gateways: {slack: {listen: nowhere}}\n":                                                        "gateways.slack.listen",
	}
	for src, key := range bad {
		if _, err := parse(src); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%q: error %v, want one naming %s", src, err, key)
		}
	}
	c, err := parse("gateways: {slack: {bot_token: xoxb-1, signing_secret: sec-ret, mode: events, listen: '127.0.0.1:0', channel: all}}\n")
	if err != nil {
		t.Fatal(err)
	}
	s := c.Gateways.Section(slack.Name).(*slack.Section)
	if !s.Enabled() || s.Mode != slack.ModeEvents || s.Channel != slack.ChannelAll {
		t.Fatalf("section %+v", s)
	}
	if d := s.Doctor(); !d.Runs || !strings.Contains(d.Lines[0], "events API on 127.0.0.1:0/slack/events") || !strings.Contains(d.Lines[0], "channels: all") {
		t.Fatalf("doctor %+v", d)
	}
	found := false
	for _, sec := range s.Secrets() {
		found = found || sec.Value() == "sec-ret"
	}
	if !found || len(s.Warnings()) != 0 {
		t.Fatalf("secrets %v, warnings %v", s.Secrets(), s.Warnings())
	}
}
