package telegram

import (
	"encoding/json"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

func withDocument(m faketg.Message, id string) faketg.Message {
	m.Extra = map[string]json.RawMessage{"document": json.RawMessage(`{"file_id":"` + id + `","file_unique_id":"u","file_name":"a.txt","file_size":3}`)}
	return m
}

// TestGroupFilesOnlyWhenAddressed: with group: all, a captioned file in a
// group that does not address the bot reaches the core as its text alone;
// addressed, it carries the file; a private one always does.
func TestGroupFilesOnlyWhenAddressed(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.Group = GroupAll })).start()
	id := h.fake.AddFile([]byte("abc"), ".txt")
	plain := inGroup(alice, "")
	plain.Caption = "just sharing"
	h.fake.InjectMessage(withDocument(plain, id))
	if s := h.inbox.Next(t); s.Text != "just sharing" || len(s.Attachments) != 0 {
		t.Fatalf("unaddressed: %+v", s)
	}
	mention := inGroup(alice, "")
	mention.Caption = "@gatehouse_bot read this"
	h.fake.InjectMessage(withDocument(mention, id))
	s := h.inbox.Next(t)
	if s.Text != "read this" || len(s.Attachments) != 1 || s.Attachments[0].Name != "a.txt" || s.Attachments[0].Kind != core.AttachDocument {
		t.Fatalf("addressed: %+v", s)
	}
	h.fake.InjectMessage(withDocument(dm(bob, ""), id))
	if s := h.inbox.Next(t); s.Text != "" || len(s.Attachments) != 1 {
		t.Fatalf("private: %+v", s)
	}
	if d := h.fake.Downloads(); len(d) != 0 {
		t.Errorf("the gateway fetched on its own: %+v", d)
	}
}
