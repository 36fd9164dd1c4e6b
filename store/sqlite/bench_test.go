package sqlite_test

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
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

// BenchmarkMessageStore measures what the store does for one message of
// the bench's burst (100 conversations in turn): the user's message
// appended, the history loaded, the usage added, the reply appended and
// the update offset saved, each with a cancellable context as the engine
// and the gateway pass. Compare CPU time (perf stat, or -cpuprofile),
// not only ns/op: most of the cost is system calls and goroutine wake-ups.
func BenchmarkMessageStore(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := openTemp(b, sqlite.Options{})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := storeMessage(ctx, db, i); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMessageStoreConcurrent is BenchmarkMessageStore with eight
// conversations' turns at once, as the engine's eight workers run them:
// writes that wait for another's commit share it (group commit). Run it
// with -cpu 1, as the bot runs.
func BenchmarkMessageStoreConcurrent(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := openTemp(b, sqlite.Options{})
	b.ReportAllocs()
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := storeMessage(ctx, db, int(next.Add(1))); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// storeMessage is the store's work for message i of the bench's burst.
func storeMessage(ctx context.Context, db *sqlite.DB, i int) error {
	user := llm.Message{Role: llm.RoleUser, Content: "what is the disk usage of the workspace?"}
	reply := llm.Message{Role: llm.RoleAssistant, Content: "The workspace uses 12 MB across 140 files."}
	conv := "telegram:" + strconv.Itoa(i%100)
	if err := db.Append(ctx, conv, user); err != nil {
		return err
	}
	if _, err := db.Load(ctx, conv); err != nil {
		return err
	}
	if err := db.AddUsage(ctx, conv, llm.Usage{PromptTokens: 100, CompletionTokens: 10}); err != nil {
		return err
	}
	if err := db.Append(ctx, conv, reply); err != nil {
		return err
	}
	return db.SetCursor(ctx, "telegram:offset:1", strconv.Itoa(i))
}
