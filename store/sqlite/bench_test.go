package sqlite_test

import (
	"context"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// BenchmarkHistoryAppendLoad measures the store cost of one chat message:
// append the user's message and the assistant's reply (two transactions,
// as the engine does), then load the conversation (40 messages once warm).
func BenchmarkHistoryAppendLoad(b *testing.B) {
	ctx := context.Background()
	db := openTemp(b, sqlite.Options{})
	user := llm.Message{Role: llm.RoleUser, Content: "what is the disk usage of the workspace?"}
	reply := llm.Message{Role: llm.RoleAssistant, Content: "The workspace uses 12 MB across 140 files."}
	b.ReportAllocs()
	for b.Loop() {
		if err := db.Append(ctx, "telegram:-1001234:56", user); err != nil {
			b.Fatal(err)
		}
		if err := db.Append(ctx, "telegram:-1001234:56", reply); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Load(ctx, "telegram:-1001234:56"); err != nil {
			b.Fatal(err)
		}
	}
}
