package slack

import (
	"context"
	"testing"

	"github.com/slack-go/slack"
)

// TestConversationsReplies: conversations.replies through slack-go answers
// a thread (parent first, then replies oldest first, the bot's posts and
// the messages of people alike) in pages of limit with a cursor, records
// each call, and refuses an unknown thread and a bad limit or cursor as
// Slack does.
func TestConversationsReplies(t *testing.T) {
	s, api := newFake(t, Options{})
	ctx := context.Background()
	parent := s.Said(Event{Channel: "C1", User: "U1", Text: "question"})
	s.InjectMessage(Event{Channel: "C1", User: "U2", Text: "me too", ThreadTS: parent})
	_, mine, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("an answer", false), slack.MsgOptionTS(parent))
	if err != nil {
		t.Fatal(err)
	}
	s.Said(Event{Channel: "C1", User: "U3", Text: "another thread"})

	msgs, more, cursor, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: parent, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || !more || cursor == "" {
		t.Fatalf("first page: %d messages, has_more %v, cursor %q; want 2, true, a cursor", len(msgs), more, cursor)
	}
	if msgs[0].Timestamp != parent || msgs[0].User != "U1" || msgs[0].ReplyCount != 2 || msgs[0].ThreadTimestamp != parent {
		t.Errorf("parent = %+v", msgs[0].Msg)
	}
	if msgs[1].User != "U2" || msgs[1].ThreadTimestamp != parent || msgs[1].ParentUserId != "U1" {
		t.Errorf("first reply = %+v", msgs[1].Msg)
	}
	msgs, more, _, err = api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: parent, Limit: 2, Cursor: cursor})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || more || msgs[0].Timestamp != mine || msgs[0].User != s.BotUserID() || msgs[0].BotID != s.BotID() {
		t.Fatalf("second page: %+v (has_more %v); want the bot's reply only", msgs, more)
	}
	calls := s.RepliesCalls()
	if len(calls) != 2 || calls[0] != (RepliesCall{Channel: "C1", TS: parent, Limit: "2"}) || calls[1].Cursor != cursor {
		t.Errorf("recorded calls = %+v", calls)
	}
	for _, tt := range []struct {
		p    slack.GetConversationRepliesParameters
		want string
	}{
		{slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: "1.000001"}, "thread_not_found"},
		{slack.GetConversationRepliesParameters{ChannelID: "C2", Timestamp: parent}, "thread_not_found"},
		{slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: parent, Cursor: "bogus"}, "invalid_cursor"},
	} {
		if _, _, _, err := api.GetConversationRepliesContext(ctx, &tt.p); err == nil || err.Error() != tt.want {
			t.Errorf("replies %+v: %v; want %s", tt.p, err, tt.want)
		}
	}
}
