package core_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// TestWaitingConversationsHoldNoGoroutine: conversations waiting for a
// concurrency slot wait as a place in line, not as a goroutine each (whose
// stack each collection shrank while it waited and its turn grew again);
// every one of them is still answered, each conversation in order.
func TestWaitingConversationsHoldNoGoroutine(t *testing.T) {
	const convs, perConv, slots = 40, 3, 2
	entered := make(chan struct{}, convs*perConv)
	release := make(chan struct{})
	prov := providerFunc(func(ctx context.Context, r llm.Request) (llm.Response, error) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return llm.Response{}, ctx.Err()
		}
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "re " + r.Messages[len(r.Messages)-1].Content}}, nil
	})
	var mu sync.Mutex
	got := map[string][]string{}
	gw := core.ActuatorFunc(func(_ context.Context, a core.Action) (core.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		got[a.Conv.Chat] = append(got[a.Conv.Chat], a.Text)
		return core.Result{}, nil
	})
	eng := runEngine(t, core.Config{Provider: prov, Concurrency: slots, Log: zerolog.Nop()}, "s", gw)
	before := runtime.NumGoroutine()
	for i := range perConv {
		for c := range convs {
			chat := fmt.Sprint("c", c)
			s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "s", Chat: chat}, From: "s:1", Text: fmt.Sprint(chat, "-", i)}
			if err := eng.Submit(context.Background(), s); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range slots {
		<-entered
	}
	// The turns in the slots may run a goroutine or two of their own.
	if n := runtime.NumGoroutine() - before; n > 2*slots+2 {
		t.Fatalf("%d conversations waiting for %d slots: %d more goroutines; want at most %d", convs, slots, n, 2*slots+2)
	}
	close(release)
	for range convs*perConv - slots {
		<-entered
	}
	if err := eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for c := range convs {
		chat := fmt.Sprint("c", c)
		want := []string{"re " + chat + "-0", "re " + chat + "-1", "re " + chat + "-2"}
		if fmt.Sprint(got[chat]) != fmt.Sprint(want) {
			t.Errorf("%s answered %q; want %q", chat, got[chat], want)
		}
	}
}
