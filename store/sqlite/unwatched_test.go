package sqlite_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// TestCancelledContextStillRefused: the writer's statements run without
// their context's cancellation (unwatched), but a context already ended
// is still refused before anything is written or read.
func TestCancelledContextStillRefused(t *testing.T) {
	db := openTemp(t, sqlite.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	msg := llm.Message{Role: llm.RoleUser, Content: "hi"}
	for name, err := range map[string]error{
		"Append":    db.Append(ctx, "c", msg),
		"AddUsage":  db.AddUsage(ctx, "c", llm.Usage{PromptTokens: 1}),
		"SetCursor": db.SetCursor(ctx, "k", "v"),
	} {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v; want context.Canceled", name, err)
		}
	}
	if _, err := db.Load(ctx, "c"); !errors.Is(err, context.Canceled) {
		t.Errorf("Load with a cancelled context: %v; want context.Canceled", err)
	}
	live := context.Background()
	if msgs, err := db.Load(live, "c"); err != nil || len(msgs) != 0 {
		t.Fatalf("after the refused append, Load = %v, %v; want nothing stored", msgs, err)
	}
	if v, err := db.Cursor(live, "k"); err != nil || v != "" {
		t.Fatalf("after the refused SetCursor, Cursor = %q, %v; want none", v, err)
	}
}
