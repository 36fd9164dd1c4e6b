package gateways_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// takenJournal is a journal whose every reply is in it already: another
// instance's to send.
type takenJournal struct{ progress atomic.Int32 }

func (*takenJournal) Serve(string) {}

func (*takenJournal) WriteReply(context.Context, string, core.Conversation, string) (int64, error) {
	return 0, fmt.Errorf("journal: %w", gateways.ErrReplyTaken)
}

func (j *takenJournal) ReplyProgress(context.Context, int64, int, bool, bool) error {
	j.progress.Add(1)
	return nil
}

// TestReplyTakenIsNotSent: a reply the journal has already (an inbox
// entry's reply written by another instance, gateways.ErrReplyTaken) is
// not sent here, and nothing is recorded of it; Reply reports no error.
func TestReplyTakenIsNotSent(t *testing.T) {
	j := &takenJournal{}
	out := sharedOutbox(t, &gateways.Shared{Journal: j}, nil)
	var sends atomic.Int32
	ids, err := out.Reply(core.WithJournalEntry(context.Background(), 7), core.Conversation{Gateway: "test", Chat: "9"}, "the answer",
		func(context.Context, gateways.Chunk) (string, error) { sends.Add(1); return "1", nil })
	if err != nil || len(ids) != 0 {
		t.Fatalf("Reply = %v, %v; want nothing sent and no error", ids, err)
	}
	if sends.Load() != 0 || j.progress.Load() != 0 {
		t.Fatalf("%d sends, %d progress records; want none", sends.Load(), j.progress.Load())
	}
}
