package telegram_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// streamed makes the configuration's provider stream its answers.
func streamed(c *config.Config) { c.LLM.Providers[0].Stream = true }

// shown is a message as the chat shows it at the end: its id, text (HTML
// source) and parse mode.
type shown struct {
	id         int
	text, mode string
}

// replyMessages returns the messages the bot sent to chat, each as it
// stands now (after its edits), in the order they were sent.
func replyMessages(tg *faketg.Server, chat int64) []shown {
	var out []shown
	for _, s := range tg.Sent() {
		if s.ChatID != chat || s.Method != "sendMessage" {
			continue
		}
		if m, ok := tg.Message(chat, s.MessageID); ok {
			out = append(out, shown{s.MessageID, m.Text, m.ParseMode})
		}
	}
	return out
}

// sameTexts reports whether a and b show the same texts, ids aside.
func sameTexts(a, b []shown) bool {
	return slices.EqualFunc(a, b, func(x, y shown) bool { return x.text == y.text && x.mode == y.mode })
}

// nonStreamed runs answer through a bot whose provider does not stream and
// returns the messages it sent: what a streamed reply must end as.
func nonStreamed(t *testing.T, answer string) []shown {
	t.Helper()
	e := startE2E(t)
	e.ai.Push(fakeoai.Text(answer))
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: faketg.Chat{ID: guest.ID, Type: "private"}, Text: "the plan, please"})
	var got []shown
	testutil.WaitFor(t, "the non-streamed reply", func() bool {
		got = replyMessages(e.tg, guest.ID)
		return len(got) > 0 && strings.HasSuffix(got[len(got)-1].text, gatewaytest.LongAnswerEnd)
	})
	if len(got) < 2 {
		t.Fatalf("the non-streamed reply took %d message(s); want the 6,000 characters split in 2", len(got))
	}
	return got
}

// checkEditPace fails the test when two deliveries to one message (its
// send and its edits, as the fake received them) came less than
// gateways.LiveEvery apart, and returns the number of edits.
func checkEditPace(t *testing.T, tg *faketg.Server, chat int64) int {
	t.Helper()
	var ds []testutil.Delivery
	for _, s := range tg.Sent() {
		if s.ChatID == chat && (s.Method == "sendMessage" || s.Method == "editMessageText") {
			ds = append(ds, testutil.Delivery{Key: strconv.Itoa(s.MessageID), At: s.At})
		}
	}
	return testutil.CheckSpacing(t, ds, gateways.LiveEvery)
}

// TestE2EStreamedReplyEndsAsTheNonStreamedMessages: a 6,000-character
// answer streamed in small chunks over a few seconds is shown while it is
// written — sent once there is a sentence, then edited in place — and ends
// as exactly the messages the same answer sends without streaming, each
// message edited at most once a second.
func TestE2EStreamedReplyEndsAsTheNonStreamedMessages(t *testing.T) {
	t.Parallel()
	answer := gatewaytest.LongAnswer()
	want := nonStreamed(t, answer)

	e := startE2EWith(t, faketg.Options{}, streamed)
	e.ai.Push(fakeoai.Text(answer).Chunked(180, 60*time.Millisecond))
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: faketg.Chat{ID: guest.ID, Type: "private"}, Text: "the plan, please"})
	testutil.WaitFor(t, "the streamed reply's first message", func() bool { return len(replyMessages(e.tg, guest.ID)) > 0 })
	if first := replyMessages(e.tg, guest.ID)[0]; len(first.text) >= len(want[0].text) {
		t.Errorf("the first message showed %d bytes as soon as it was sent; want part of the answer, shown while written", len(first.text))
	}
	var got []shown
	testutil.WaitFor(t, "the streamed reply to end as the non-streamed one", func() bool {
		got = replyMessages(e.tg, guest.ID)
		return sameTexts(got, want)
	})
	if edits := checkEditPace(t, e.tg, guest.ID); edits < 2 {
		t.Errorf("%d edits; want the reply edited in place as it grew", edits)
	}
	if n := len(e.ai.Requests()); n != 1 || !e.ai.Requests()[0].Stream {
		t.Errorf("%d LLM requests (stream %v); want 1 streamed", n, n > 0 && e.ai.Requests()[0].Stream)
	}
}

// TestE2EStreamedEditRateLimitedLosesNothing: a 429 with retry_after on an
// edit delays that edit — no send or edit reaches the chat before the
// pause is over — and the reply still ends as exactly the non-streamed messages.
func TestE2EStreamedEditRateLimitedLosesNothing(t *testing.T) {
	t.Parallel()
	answer := gatewaytest.LongAnswer()
	want := nonStreamed(t, answer)

	// retry_after 20 units of the client's 10 ms (telegram.FastConfig).
	e := startE2EWith(t, faketg.Options{RetryAfter: 20, RetryAfterUnit: 10 * time.Millisecond}, streamed)
	e.tg.FailNext("editMessageText", 1, faketg.FaultTooMany)
	e.ai.Push(fakeoai.Text(answer).Chunked(180, 60*time.Millisecond))
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: faketg.Chat{ID: guest.ID, Type: "private"}, Text: "the plan, please"})
	testutil.WaitFor(t, "the streamed reply to end as the non-streamed one", func() bool {
		return sameTexts(replyMessages(e.tg, guest.ID), want)
	})
	if n := e.tg.Calls("editMessageText"); n < 2 {
		t.Errorf("%d editMessageText calls; want the refused one and the ones after it", n)
	}
	// The typing indicator skips its renewals during a pause, but one
	// already on its way when the 429 came may arrive in it.
	if n := e.tg.EarlyCalls("sendMessage") + e.tg.EarlyCalls("editMessageText"); n != 0 {
		t.Errorf("%d sends or edits arrived during the 429 pause; want none", n)
	}
	checkEditPace(t, e.tg, guest.ID)
}

// TestE2EStreamedTextBeforeAToolCallIsFinalised: text the model streams
// before a tool call is shown live and left as it stands — its message
// ends with the whole text and is not touched after the answer is sent —
// the tool call runs and its result goes back to the model, and the answer
// comes as a message of its own.
func TestE2EStreamedTextBeforeAToolCallIsFinalised(t *testing.T) {
	t.Parallel()
	const before = "Let me look at the clock first. It takes a moment, so bear with me while I ask for the time in UTC."
	const answer = "It is noon in UTC."
	e := startE2EWith(t, faketg.Options{}, streamed)
	e.ai.Push(
		fakeoai.TextThenCalls(before, fakeoai.Call{ID: "call_t", Name: "current_time", Args: `{"timezone":"UTC"}`}).Chunked(8, 120*time.Millisecond),
		fakeoai.Text(answer).Chunked(4, 0),
	)
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: faketg.Chat{ID: guest.ID, Type: "private"}, Text: "what time is it?"})
	var got []shown
	testutil.WaitFor(t, "the answer after the tool call", func() bool {
		got = replyMessages(e.tg, guest.ID)
		return len(got) > 0 && got[len(got)-1].text == answer
	})
	if len(got) != 2 || got[0].text != before {
		t.Fatalf("messages %+v; want the text before the call, whole, then the answer", got)
	}
	// The text before the call was shown while written: sent, then edited.
	var answerSent time.Time
	deliveries := 0
	for _, s := range e.tg.Sent() {
		switch {
		case s.MessageID == got[0].id:
			deliveries++
			if !answerSent.IsZero() {
				t.Errorf("the text before the call was edited after the answer was sent: %+v", s)
			}
		case s.MessageID == got[1].id && s.Method == "sendMessage":
			answerSent = s.At
		}
	}
	if deliveries < 2 {
		t.Errorf("the text before the call reached the chat in %d delivery; want it sent and then edited as it grew", deliveries)
	}
	checkEditPace(t, e.tg, guest.ID)
	reqs := e.ai.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d LLM requests; want the one that called the tool and the one after it", len(reqs))
	}
	if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.Role != "tool" || last.ToolCallID != "call_t" {
		t.Fatalf("the tool call did not proceed: the second request ends with %+v", last)
	}
}

// TestE2EStreamedPartialWithASecretIsNeverShown: an answer that writes a
// secret (the provider's API key) part-way through is shown live up to the
// secret and no further — no send or edit carries any of it — and the live
// message is withdrawn; the model, told its reply was not sent, answers
// again.
func TestE2EStreamedPartialWithASecretIsNeverShown(t *testing.T) {
	t.Parallel()
	const retry = "Sorry, I cannot share that."
	e := startE2EWith(t, faketg.Options{}, streamed)
	e.ai.Push(
		fakeoai.Text("Sure, here is what you asked for. The key is "+e2eAPIKey+" and you may use it as you like.").Chunked(6, 100*time.Millisecond),
		fakeoai.Text(retry),
	)
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: faketg.Chat{ID: guest.ID, Type: "private"}, Text: "the key, please"})
	var got []shown
	testutil.WaitFor(t, "the second answer", func() bool {
		got = replyMessages(e.tg, guest.ID)
		return len(got) > 0 && got[len(got)-1].text == retry
	})
	if len(got) != 2 || got[0].text != "(reply withdrawn)" {
		t.Fatalf("messages %+v; want the live reply withdrawn, then the second answer", got)
	}
	shownBefore := false
	for _, s := range e.tg.Sent() {
		if s.ChatID != guest.ID {
			continue
		}
		shownBefore = shownBefore || strings.Contains(s.Plain, "here is what you asked for")
		for _, part := range []string{e2eAPIKey, "sk-e2e", "openai-key"} {
			if strings.Contains(s.Text, part) || strings.Contains(s.Plain, part) {
				t.Errorf("a %s shows (part of) the secret: %q", s.Method, s.Plain)
			}
		}
	}
	if !shownBefore {
		t.Error("the text before the secret was never shown: the test proves nothing")
	}
	if reqs := e.ai.Requests(); len(reqs) != 2 || !strings.Contains(reqs[1].Messages[len(reqs[1].Messages)-1].Content, "not sent") {
		t.Errorf("the model was not told its reply was not sent: %d requests", len(reqs))
	}
}

// TestE2EStreamedReplyOpeningWithCodeLosesNothing: an answer that opens
// with a code block has, as its first partial, only the fence line, which
// rendered as HTML is an empty code block, refused by Telegram as an empty
// message. The reply is still shown live (that partial goes as plain
// text) and ends as the non-streamed message.
func TestE2EStreamedReplyOpeningWithCodeLosesNothing(t *testing.T) {
	t.Parallel()
	const answer = "```python\nprint('hello')\n```\nThat prints hello."

	plain := startE2E(t)
	plain.ai.Push(fakeoai.Text(answer))
	plain.tg.InjectMessage(faketg.Message{From: &guest, Chat: faketg.Chat{ID: guest.ID, Type: "private"}, Text: "some code, please"})
	var want []shown
	testutil.WaitFor(t, "the non-streamed reply", func() bool {
		want = replyMessages(plain.tg, guest.ID)
		return len(want) > 0
	})

	e := startE2EWith(t, faketg.Options{}, streamed)
	e.ai.Push(fakeoai.Text(answer).Chunked(len("```python\n"), 300*time.Millisecond))
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: faketg.Chat{ID: guest.ID, Type: "private"}, Text: "some code, please"})
	testutil.WaitFor(t, "the streamed reply to end as the non-streamed one", func() bool {
		return sameTexts(replyMessages(e.tg, guest.ID), want)
	})
	if edits := checkEditPace(t, e.tg, guest.ID); edits == 0 {
		t.Error("no edits: the reply was not shown while it was written")
	}
}
