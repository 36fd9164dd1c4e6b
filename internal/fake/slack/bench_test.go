package slack

import (
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// BenchmarkPostMessage is one chat.postMessage through slack-go and the
// fake: the fake's share of a gateway's per-message benchmark.
func BenchmarkPostMessage(b *testing.B) {
	s := New(Options{})
	b.Cleanup(s.Close)
	api := slack.New(s.BotToken(), slack.OptionAPIURL(s.URL()+"/api/"))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := api.PostMessage("C1", slack.MsgOptionText("a reply of a usual length, with *some* mrkdwn", false)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSocketModeEvent is one injected DM received and acknowledged by
// slack-go's socketmode client.
func BenchmarkSocketModeEvent(b *testing.B) {
	s := New(Options{})
	b.Cleanup(s.Close)
	c := runClient(b, s)
	c.next(b, socketmode.EventTypeHello)
	b.ReportAllocs()
	for b.Loop() {
		s.InjectDM("U1", "hello")
		c.nextInner(b)
	}
}
