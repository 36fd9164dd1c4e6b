package telegram

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func newFake(t *testing.T) (*Server, *tgbotapi.BotAPI) {
	t.Helper()
	s := New(Options{MaxPollWait: 200 * time.Millisecond})
	t.Cleanup(s.Close)
	bot, err := tgbotapi.NewBotAPIWithClient(s.Token(), s.URL()+"/bot%s/%s", &http.Client{})
	if err != nil {
		t.Fatalf("client against the fake: %v", err)
	}
	return s, bot
}

func TestGetMeAndWrongToken(t *testing.T) {
	s, bot := newFake(t)
	if bot.Self.UserName != "gatehouse_bot" || !bot.Self.IsBot {
		t.Fatalf("getMe = %+v", bot.Self)
	}
	_, err := tgbotapi.NewBotAPIWithClient("999:wrong", s.URL()+"/bot%s/%s", &http.Client{})
	var apiErr *tgbotapi.Error
	if !errors.As(err, &apiErr) || apiErr.Code != http.StatusUnauthorized {
		t.Fatalf("wrong token: %v", err)
	}
}

func TestGetUpdatesLongPollsAndConfirmsByOffset(t *testing.T) {
	s, bot := newFake(t)
	got := make(chan []tgbotapi.Update, 1)
	go func() {
		u, err := bot.GetUpdates(tgbotapi.UpdateConfig{Timeout: 5})
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	testutil.WaitFor(t, "the first poll", func() bool { return len(s.Polls()) == 1 })
	id := s.InjectMessage(Message{From: &User{ID: 5, FirstName: "Ann"}, Chat: Chat{ID: 5}, Text: "hello"})
	u := <-got
	if len(u) != 1 || u[0].UpdateID != id || u[0].Message.Text != "hello" || !u[0].Message.Chat.IsPrivate() {
		t.Fatalf("long poll answered %+v", u)
	}
	id2 := s.InjectMessage(Message{From: &User{ID: 5}, Chat: Chat{ID: 5}, Text: "again"})
	u, err := bot.GetUpdates(tgbotapi.UpdateConfig{Offset: id + 1, Timeout: 1})
	if err != nil || len(u) != 1 || u[0].UpdateID != id2 {
		t.Fatalf("offset %d: %+v, %v", id+1, u, err)
	}
	if _, err := bot.GetUpdates(tgbotapi.UpdateConfig{Offset: id2 + 1}); err != nil {
		t.Fatal(err)
	}
	if s.Pending() != 0 {
		t.Fatalf("%d updates still pending after confirming all", s.Pending())
	}
	polls := s.Polls()
	if last := polls[len(polls)-1]; last.Offset != id2+1 {
		t.Fatalf("recorded polls %+v", polls)
	}
}

func TestGetUpdatesTimesOutEmpty(t *testing.T) {
	_, bot := newFake(t)
	u, err := bot.GetUpdates(tgbotapi.UpdateConfig{Timeout: 1})
	if err != nil || len(u) != 0 {
		t.Fatalf("empty poll: %+v, %v", u, err)
	}
}

func TestInjectUpdateStampsID(t *testing.T) {
	s, bot := newFake(t)
	a := s.InjectUpdate(`{"message":{"message_id":"not a number"}}`)
	b := s.InjectUpdate(`not json at all`)
	resp, err := bot.Request(tgbotapi.UpdateConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var raws []map[string]json.RawMessage
	if err := json.Unmarshal(resp.Result, &raws); err != nil || len(raws) != 2 {
		t.Fatalf("result %s: %v", resp.Result, err)
	}
	for i, want := range []int{a, b} {
		if string(raws[i]["update_id"]) != strconv.Itoa(want) {
			t.Fatalf("update %d has id %s, want %d", i, raws[i]["update_id"], want)
		}
	}
}

func TestSendMessageRules(t *testing.T) {
	for _, tc := range []struct {
		name    string
		text    string
		mode    string
		wantErr string
		plain   string
	}{
		{"plain", "hi & <there>", "", "", "hi & <there>"},
		{"html", "<b>bold</b> &amp; <a href=\"https://x.y\">link</a>", "HTML", "", "bold & link"},
		{"unknown tag", "<foo>x</foo>", "HTML", "can't parse entities", ""},
		{"bare lt", "a < b", "HTML", "can't parse entities", ""},
		{"unclosed", "<b>x", "HTML", "can't parse entities", ""},
		{"too long", strings.Repeat("😀", 2049), "", "message is too long", ""},
		{"limit exactly", strings.Repeat("😀", 2048), "", "", strings.Repeat("😀", 2048)},
		{"html counts visible text", strings.Repeat("&lt;", 4096), "HTML", "", strings.Repeat("<", 4096)},
		{"empty", "  ", "", "message text is empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, bot := newFake(t)
			msg := tgbotapi.NewMessage(42, tc.text)
			msg.ParseMode = tc.mode
			_, err := bot.Send(msg)
			if tc.wantErr != "" {
				var apiErr *tgbotapi.Error
				if !errors.As(err, &apiErr) || apiErr.Code != 400 || !strings.Contains(apiErr.Message, tc.wantErr) {
					t.Fatalf("want 400 %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sent := s.Sent()
			if len(sent) != 1 || sent[0].Plain != tc.plain || sent[0].ChatID != 42 {
				t.Fatalf("recorded %+v", sent)
			}
		})
	}
}

func TestKeyboardEditsAndCallbacks(t *testing.T) {
	s, bot := newFake(t)
	msg := tgbotapi.NewMessage(42, "approve?")
	msg.ReplyMarkup = tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(
		tgbotapi.NewInlineKeyboardButtonData("Approve", "a:TOK"),
		tgbotapi.NewInlineKeyboardButtonData("Deny", "d:TOK")))
	m, err := bot.Send(msg)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := s.Message(42, m.MessageID)
	if b := rec.Markup.Buttons(); len(b) != 2 || b[0].CallbackData != "a:TOK" {
		t.Fatalf("markup %+v", rec.Markup)
	}
	id := s.InjectCallback(Callback{From: User{ID: 9}, ChatID: 42, MessageID: m.MessageID, Data: "a:TOK"})
	if _, err := bot.Request(tgbotapi.NewCallback(CallbackQueryID(id), "approved")); err != nil {
		t.Fatal(err)
	}
	if _, err := bot.Request(tgbotapi.NewCallback("bogus", "x")); err == nil {
		t.Fatal("unknown callback query accepted")
	}
	if a := s.Answers(); len(a) != 1 || a[0].Text != "approved" {
		t.Fatalf("answers %+v", a)
	}
	if _, err := bot.Send(tgbotapi.NewEditMessageText(42, m.MessageID, "approve? — approved")); err != nil {
		t.Fatal(err)
	}
	rec, _ = s.Message(42, m.MessageID)
	if rec.Markup != nil || rec.Plain != "approve? — approved" {
		t.Fatalf("after edit %+v", rec)
	}
	_, err = bot.Send(tgbotapi.NewEditMessageText(42, m.MessageID, "approve? — approved"))
	if err == nil || !strings.Contains(err.Error(), "message is not modified") {
		t.Fatalf("identical edit: %v", err)
	}
	if _, err := bot.Send(tgbotapi.NewEditMessageText(42, 999, "x")); err == nil {
		t.Fatal("edit of a missing message accepted")
	}
}

func TestFaults(t *testing.T) {
	s, bot := newFake(t)
	s.FailNext("sendMessage", 1, FaultTooMany)
	s.FailNext("sendMessage", 1, FaultServer)
	s.FailNext("sendMessage", 1, FaultMalformed)
	s.FailNext("getUpdates", 1, FaultConflict)

	var apiErr *tgbotapi.Error
	_, err := bot.Send(tgbotapi.NewMessage(1, "x"))
	if !errors.As(err, &apiErr) || apiErr.Code != 429 || apiErr.RetryAfter != 1 {
		t.Fatalf("429: %v", err)
	}
	if s.Early() != 0 {
		t.Fatal("a request after a 429 is early only when it is for the same chat")
	}
	_, err = bot.Send(tgbotapi.NewMessage(1, "x"))
	if s.Early() != 1 {
		t.Fatalf("Early = %d after an immediate retry, want 1", s.Early())
	}
	if !errors.As(err, &apiErr) || apiErr.Code != 500 {
		t.Fatalf("500: %v", err)
	}
	_, err = bot.Send(tgbotapi.NewMessage(1, "x"))
	if err == nil || errors.As(err, &apiErr) {
		t.Fatalf("malformed body must be a decode error, got %v", err)
	}
	_, err = bot.GetUpdates(tgbotapi.UpdateConfig{})
	if !errors.As(err, &apiErr) || apiErr.Code != 409 {
		t.Fatalf("409: %v", err)
	}
	if _, err := bot.Send(tgbotapi.NewMessage(1, "x")); err != nil {
		t.Fatalf("faults must be used up: %v", err)
	}
	if n := s.Calls("sendMessage"); n != 4 {
		t.Fatalf("Calls = %d, want 4", n)
	}
}

func TestHangReleasedAndClosed(t *testing.T) {
	s, bot := newFake(t)
	s.FailNext("sendMessage", 2, FaultHang)
	done := make(chan error, 2)
	for range 2 {
		go func() { _, err := bot.Send(tgbotapi.NewMessage(1, "x")); done <- err }()
	}
	testutil.WaitFor(t, "two sendMessage calls", func() bool { return s.Calls("sendMessage") == 2 })
	s.Release()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatalf("released request: %v", err)
		}
	}
	s.FailNext("getMe", 1, FaultHang)
	go func() { _, err := bot.GetMe(); done <- err }()
	testutil.WaitFor(t, "two getMe calls", func() bool { return s.Calls("getMe") == 2 })
	s.Close()
	if err := <-done; err == nil {
		t.Fatal("a hung request cut by Close must fail")
	}
}

func TestJSONBodyAndWebhook(t *testing.T) {
	s, _ := newFake(t)
	body := `{"url":"https://example.test/hook","secret_token":"s3cret"}`
	resp, err := http.Post(s.URL()+"/bot"+s.Token()+"/setWebhook", "application/json", strings.NewReader(body))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("setWebhook: %v %v", resp, err)
	}
	resp.Body.Close()
	if u, sec := s.Webhook(); u != "https://example.test/hook" || sec != "s3cret" {
		t.Fatalf("webhook %q %q", u, sec)
	}
	resp, err = http.PostForm(s.URL()+"/bot"+s.Token()+"/getUpdates", url.Values{})
	if err != nil || resp.StatusCode != http.StatusConflict {
		t.Fatalf("getUpdates with a webhook set: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestDetectEntities(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []Entity
	}{
		{"hi @gatehouse_bot there", []Entity{{Type: "mention", Offset: 3, Length: 14}}},
		{"/approve@gatehouse_bot K7", []Entity{{Type: "bot_command", Offset: 0, Length: 22}}},
		{"😀 @bot", []Entity{{Type: "mention", Offset: 3, Length: 4}}},
		{"mail a@b.c", nil},
	} {
		got := detectEntities(tc.text)
		if len(got) != len(tc.want) {
			t.Fatalf("%q: %+v", tc.text, got)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%q: %+v, want %+v", tc.text, got, tc.want)
			}
		}
	}
}

func TestCallbackQueryExpires(t *testing.T) {
	s := New(Options{MaxPollWait: 200 * time.Millisecond, QueryTTL: time.Millisecond})
	t.Cleanup(s.Close)
	bot, err := tgbotapi.NewBotAPIWithClient(s.Token(), s.URL()+"/bot%s/%s", &http.Client{})
	if err != nil {
		t.Fatal(err)
	}
	id := s.InjectCallback(Callback{From: User{ID: 9}, ChatID: 42, MessageID: 1, Data: "a:TOK"})
	time.Sleep(20 * time.Millisecond) // well past the TTL
	_, err = bot.Request(tgbotapi.NewCallback(CallbackQueryID(id), "too late"))
	var apiErr *tgbotapi.Error
	if !errors.As(err, &apiErr) || apiErr.Code != 400 || !strings.Contains(apiErr.Message, "query is too old") {
		t.Fatalf("late answer: %v, want 400 query is too old", err)
	}
	if a := s.Answers(); len(a) != 0 {
		t.Fatalf("late answer recorded: %+v", a)
	}
	if n := s.LateAnswers(); n != 1 {
		t.Fatalf("LateAnswers = %d, want 1", n)
	}
}

func TestMigratedGroupAnswersWithItsSupergroup(t *testing.T) {
	s, bot := newFake(t)
	s.Migrate(-500, -100500)
	_, err := bot.Send(tgbotapi.NewMessage(-500, "hello"))
	var apiErr *tgbotapi.Error
	if !errors.As(err, &apiErr) || apiErr.Code != http.StatusBadRequest || apiErr.MigrateToChatID != -100500 {
		t.Fatalf("send to the old group: %v (%+v)", err, apiErr)
	}
	if _, err := bot.Send(tgbotapi.NewMessage(-100500, "hello")); err != nil {
		t.Fatalf("send to the supergroup: %v", err)
	}
}
