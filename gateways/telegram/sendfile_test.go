package telegram

import (
	"bytes"
	"context"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
)

// A file goes into the conversation's forum topic; a photo Telegram
// cannot process goes again, at once, as a document.
func TestSendFileIntoATopicAndPhotoFallback(t *testing.T) {
	h := newHarness(t).start()
	conv := core.Conversation{Gateway: Name, Chat: "-100123", Thread: "42"}
	notAnImage := []byte("\x89PNG but truncated")
	err := h.gw.SendFile(context.Background(), conv, core.OutgoingFile{Name: "x.png", MediaType: "image/png", Data: notAnImage, Caption: "c"})
	if err != nil {
		t.Fatal(err)
	}
	ups := h.fake.Uploads()
	if len(ups) != 1 {
		t.Fatalf("%d uploads, want 1", len(ups))
	}
	u := ups[0]
	if u.Method != "sendDocument" || u.ChatID != -100123 || u.Thread != 42 || u.Caption != "c" || !bytes.Equal(u.Data, notAnImage) {
		t.Fatalf("upload %+v", u)
	}
	if n := h.fake.Calls("sendPhoto"); n != 1 {
		t.Errorf("%d sendPhoto requests, want the refused one", n)
	}
}

// A request Telegram refuses for good is not retried, and the error says
// so without the token.
func TestSendFileRefusedIsReported(t *testing.T) {
	h := newHarness(t).start()
	err := h.gw.SendFile(context.Background(), convOf(1002), core.OutgoingFile{Name: "e", MediaType: "text/plain", Data: nil})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("non-empty")) {
		t.Fatalf("err = %v", err)
	}
	assertNoToken(t, err.Error())
	if n := h.fake.Calls("sendDocument"); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
