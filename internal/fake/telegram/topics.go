package telegram

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/internal/fake/arrival"
)

// Topic is a forum topic the bot created (createForumTopic). As on
// Telegram, its message_thread_id is the id of the service message that
// opened it (forum_topic_created), a message of the bot.
type Topic struct {
	ChatID   int64
	ThreadID int
	Name     string
	At       time.Time // when the request arrived
}

// Forum makes chat a supergroup with topics (is_forum), titled title:
// getChat says so, createForumTopic works in it, and a message sent there
// with a message_thread_id must name one of its topics.
func (s *Server) Forum(chat int64, title string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats[chat] = Chat{ID: chat, Type: "supergroup", Title: title, IsForum: true}
	if s.forums == nil {
		s.forums = map[int64][]Topic{}
	}
	if s.forums[chat] == nil {
		s.forums[chat] = []Topic{}
	}
}

// RefuseTopics makes createForumTopic in chat fail as it does for a bot
// without the Manage Topics right.
func (s *Server) RefuseTopics(chat int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noTopics == nil {
		s.noTopics = map[int64]bool{}
	}
	s.noTopics[chat] = true
}

// Topics returns the topics created in chat, in order.
func (s *Server) Topics(chat int64) []Topic {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.forums[chat])
}

// TopicMessage is a message of from in forum topic thread of chat, as
// Telegram delivers it: message_thread_id and is_topic_message set, and,
// as it replies to nothing else, replying to the topic's opening service
// message (the bot's, for a topic the bot created).
func (s *Server) TopicMessage(chat int64, thread int, from User, text string) Message {
	s.mu.Lock()
	c := s.chatLocked(chat)
	s.mu.Unlock()
	opening := &Message{MessageID: thread, From: ptr(s.Bot()), Chat: c, Date: time.Now().Unix(),
		Extra: map[string]json.RawMessage{"message_thread_id": json.RawMessage(strconv.Itoa(thread)), "forum_topic_created": json.RawMessage(`{"name":"","icon_color":7322096}`)}}
	return Message{From: &from, Chat: c, Text: text, ReplyToMessage: opening,
		Extra: map[string]json.RawMessage{"message_thread_id": json.RawMessage(strconv.Itoa(thread)), "is_topic_message": json.RawMessage("true")}}
}

// getChat answers the chat as far as the fake knows it (is_forum for a
// Forum).
func (s *Server) getChat(w http.ResponseWriter, _ *http.Request, p params) {
	chat, ok := p.int64("chat_id")
	if !ok {
		badRequest("chat not found").write(w)
		return
	}
	s.mu.Lock()
	c := s.chatLocked(chat)
	s.mu.Unlock()
	writeResult(w, c)
}

// createForumTopic creates a topic named name (1 to 128 characters) in a
// forum; anywhere else Telegram answers "the chat is not a forum".
func (s *Server) createForumTopic(w http.ResponseWriter, r *http.Request, p params) {
	chat, ok := p.int64("chat_id")
	if !ok {
		badRequest("chat not found").write(w)
		return
	}
	name := p["name"]
	if n := utf8.RuneCountInString(name); n < 1 || n > 128 {
		badRequest("TOPIC_NAME_INVALID").write(w)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forums[chat] == nil {
		badRequest("the chat is not a forum").write(w)
		return
	}
	if s.noTopics[chat] {
		badRequest("not enough rights to create a topic").write(w)
		return
	}
	t := Topic{ChatID: chat, ThreadID: s.newMessageIDLocked(chat), Name: name, At: arrival.Of(r)}
	s.forums[chat] = append(s.forums[chat], t)
	s.messages[msgKey{chat, t.ThreadID}] = &Sent{Method: "createForumTopic", ChatID: chat, MessageID: t.ThreadID, Thread: t.ThreadID, At: t.At}
	writeResult(w, map[string]any{"message_thread_id": t.ThreadID, "name": t.Name, "icon_color": 7322096})
}

// topicLocked checks a message_thread_id sent to chat: in a forum it must
// name a topic of the chat.
func (s *Server) topicLocked(chat int64, thread int) *apiError {
	topics, forum := s.forums[chat]
	if thread == 0 || !forum {
		return nil
	}
	if !slices.ContainsFunc(topics, func(t Topic) bool { return t.ThreadID == thread }) {
		return badRequest("message thread not found")
	}
	return nil
}
