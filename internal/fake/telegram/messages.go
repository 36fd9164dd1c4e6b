package telegram

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/fake/arrival"
)

// MaxText is the longest message text, in UTF-16 code units after entity
// parsing.
const MaxText = 4096

// apiError is a 400-class answer.
type apiError struct {
	code int
	desc string
}

func badRequest(desc string) *apiError {
	return &apiError{code: http.StatusBadRequest, desc: "Bad Request: " + desc}
}

func (e *apiError) write(w http.ResponseWriter) { writeError(w, e.code, e.desc, 0) }

// Sent returns every message the bot sent or edited, in order.
func (s *Server) Sent() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sent(nil), s.sent...)
}

// Message returns the current state of a message the bot sent (after
// edits), or false.
func (s *Server) Message(chat int64, id int) (Sent, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[msgKey{chat, id}]
	if !ok || m.Method == "" {
		return Sent{}, false
	}
	return *m, true
}

// Answers returns the answerCallbackQuery calls received, in order.
func (s *Server) Answers() []Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Answer(nil), s.answers...)
}

// Actions returns the sendChatAction calls received, in order.
func (s *Server) Actions() []ChatAction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChatAction(nil), s.actions...)
}

// outgoing is a checked text with its markup.
type outgoing struct {
	text, plain, mode string
	markup            *Keyboard
}

// checkText validates text, parse_mode and reply_markup as the Bot API does.
func (s *Server) checkText(p params) (outgoing, *apiError) {
	o := outgoing{text: p["text"], plain: p["text"], mode: p["parse_mode"]}
	s.mu.Lock()
	reject := s.reject
	s.mu.Unlock()
	switch {
	case o.mode == "":
	case reject:
		return o, badRequest(`can't parse entities: Unsupported start tag "b" at byte offset 0`)
	case strings.EqualFold(o.mode, "HTML"):
		plain, err := parseHTML(o.text)
		if err != nil {
			return o, badRequest("can't parse entities: " + err.Error())
		}
		o.plain = plain
	case o.mode != "Markdown" && o.mode != "MarkdownV2":
		return o, badRequest("unsupported parse_mode")
	}
	o.plain = strings.TrimSpace(o.plain)
	if o.plain == "" {
		return o, badRequest("message text is empty")
	}
	if utf16Len(o.plain) > MaxText {
		return o, badRequest("message is too long")
	}
	kb, e := parseMarkup(p["reply_markup"])
	o.markup = kb
	return o, e
}

// parseMarkup decodes an inline keyboard and checks its callback data.
func parseMarkup(raw string) (*Keyboard, *apiError) {
	if raw == "" || raw == "null" {
		return nil, nil
	}
	var kb Keyboard
	if err := json.Unmarshal([]byte(raw), &kb); err != nil {
		return nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	for _, b := range kb.Buttons() {
		if b.URL == "" && (len(b.CallbackData) < 1 || len(b.CallbackData) > 64) {
			return nil, badRequest("BUTTON_DATA_INVALID")
		}
	}
	if len(kb.InlineKeyboard) == 0 {
		return nil, nil
	}
	return &kb, nil
}

func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request, p params) {
	chat, ok := p.int64("chat_id")
	if !ok {
		badRequest("chat not found").write(w)
		return
	}
	o, e := s.checkText(p)
	if e != nil {
		e.write(w)
		return
	}
	s.mu.Lock()
	res, e := s.storeSentLocked(chat, o, p, arrival.Of(r))
	s.mu.Unlock()
	if e != nil {
		e.write(w)
		return
	}
	writeResult(w, res)
}

// storeSentLocked records a message sent by a request that arrived at at,
// and returns the API's result.
func (s *Server) storeSentLocked(chat int64, o outgoing, p params, at time.Time) (any, *apiError) {
	replyTo := p.int("reply_to_message_id")
	if _, found := s.messages[msgKey{chat, replyTo}]; replyTo != 0 && !found && !p.bool("allow_sending_without_reply") {
		return nil, badRequest("replied message not found")
	}
	if e := s.topicLocked(chat, p.int("message_thread_id")); e != nil {
		return nil, e
	}
	m := Sent{
		Method: "sendMessage", ChatID: chat, MessageID: s.newMessageIDLocked(chat),
		Text: o.text, Plain: o.plain, ParseMode: o.mode, Markup: o.markup, ReplyTo: replyTo, Thread: p.int("message_thread_id"), At: at,
	}
	s.sent = append(s.sent, m)
	stored := m
	s.messages[msgKey{chat, m.MessageID}] = &stored
	return s.resultLocked(m), nil
}

// resultLocked is the Message object the API returns for a bot message.
func (s *Server) resultLocked(m Sent) any {
	type result struct {
		MessageID int       `json:"message_id"`
		From      User      `json:"from"`
		Chat      Chat      `json:"chat"`
		Date      int64     `json:"date"`
		EditDate  int64     `json:"edit_date,omitempty"`
		Text      string    `json:"text"`
		Markup    *Keyboard `json:"reply_markup,omitempty"`
	}
	r := result{MessageID: m.MessageID, From: s.Bot(), Chat: s.chatLocked(m.ChatID), Date: m.At.Unix(), Text: m.Plain, Markup: m.Markup}
	if m.Method != "sendMessage" {
		r.EditDate = time.Now().Unix()
	}
	return r
}

func (s *Server) editMessageText(w http.ResponseWriter, r *http.Request, p params) {
	o, e := s.checkText(p)
	if e != nil {
		e.write(w)
		return
	}
	s.edit(w, p, arrival.Of(r), "editMessageText", func(m *Sent) {
		m.Text, m.Plain, m.ParseMode, m.Markup = o.text, o.plain, o.mode, o.markup
	})
}

func (s *Server) editMessageReplyMarkup(w http.ResponseWriter, r *http.Request, p params) {
	kb, e := parseMarkup(p["reply_markup"])
	if e != nil {
		e.write(w)
		return
	}
	s.edit(w, p, arrival.Of(r), "editMessageReplyMarkup", func(m *Sent) { m.Markup = kb })
}

// edit applies change to the bot message named by chat_id and message_id,
// by a request that arrived at at.
func (s *Server) edit(w http.ResponseWriter, p params, at time.Time, method string, change func(*Sent)) {
	chat, _ := p.int64("chat_id")
	s.mu.Lock()
	res, e := s.editLocked(msgKey{chat, p.int("message_id")}, at, method, change)
	s.mu.Unlock()
	if e != nil {
		e.write(w)
		return
	}
	writeResult(w, res)
}

func (s *Server) editLocked(key msgKey, at time.Time, method string, change func(*Sent)) (any, *apiError) {
	stored, ok := s.messages[key]
	if !ok || stored.Method == "" {
		return nil, badRequest("message to edit not found")
	}
	next := *stored
	change(&next)
	if sameContent(*stored, next) {
		return nil, badRequest("message is not modified: specified new message content and reply markup are exactly the same as a previous content and reply markup of the message")
	}
	*stored = next
	rec := next
	rec.Method, rec.At = method, at
	s.sent = append(s.sent, rec)
	return s.resultLocked(rec), nil
}

func sameContent(a, b Sent) bool {
	ja, _ := json.Marshal(a.Markup)
	jb, _ := json.Marshal(b.Markup)
	return a.Text == b.Text && a.ParseMode == b.ParseMode && string(ja) == string(jb)
}

func (s *Server) answerCallbackQuery(w http.ResponseWriter, _ *http.Request, p params) {
	id := p["callback_query_id"]
	if utf16Len(p["text"]) > 200 {
		badRequest("message is too long").write(w)
		return
	}
	s.mu.Lock()
	pressed, known := s.queries[id]
	tooOld := known && s.opts.QueryTTL > 0 && time.Since(pressed) > s.opts.QueryTTL
	switch {
	case tooOld:
		s.late++
	case known:
		s.answers = append(s.answers, Answer{QueryID: id, Text: p["text"], ShowAlert: p.bool("show_alert")})
	}
	s.mu.Unlock()
	if !known || tooOld {
		badRequest("query is too old and response timeout expired or query ID is invalid").write(w)
		return
	}
	writeResult(w, true)
}

// LateAnswers returns how many answerCallbackQuery calls came after
// Options.QueryTTL and were refused.
func (s *Server) LateAnswers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.late
}

func (s *Server) sendChatAction(w http.ResponseWriter, _ *http.Request, p params) {
	chat, ok := p.int64("chat_id")
	if !ok || p["action"] == "" {
		badRequest("chat not found").write(w)
		return
	}
	s.mu.Lock()
	s.actions = append(s.actions, ChatAction{ChatID: chat, Thread: p.int("message_thread_id"), Action: p["action"]})
	s.mu.Unlock()
	writeResult(w, true)
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
