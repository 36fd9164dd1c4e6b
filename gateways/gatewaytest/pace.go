// Package gatewaytest holds test helpers the platform adapters' tests
// share.
package gatewaytest

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// Busiest is what a burst did to a platform's rate limits: the most
// requests that reached one chat, and all chats, in any window of the
// length asked for.
type Busiest struct {
	PerChat, All int
}

// Burst sends a reply to each of chats conversations of gateway at once
// through out, then edits each reply edits times, and returns the busiest
// windows of length per, as the platform would have seen the requests
// (each send and edit at the time the Outbox let it through). Run it in a
// testing/synctest bubble: the pacer waits on the bubble's clock.
func Burst(t testing.TB, out *gateways.Outbox, gateway string, chats, edits int, per time.Duration) Busiest {
	t.Helper()
	return BurstAcross(t, []*gateways.Outbox{out}, gateway, chats, edits, per)
}

// BurstAcross is Burst through several Outboxes at once, as several
// instances sending for one token: each of them sends a reply to each of
// the chats and edits it edits times. The busiest windows count the
// requests of all of them.
func BurstAcross(t testing.TB, outs []*gateways.Outbox, gateway string, chats, edits int, per time.Duration) Busiest {
	t.Helper()
	var mu sync.Mutex
	all := []time.Time{}
	perChat := map[string][]time.Time{}
	record := func(chat string) {
		mu.Lock()
		defer mu.Unlock()
		all = append(all, time.Now())
		perChat[chat] = append(perChat[chat], time.Now())
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for c := range chats {
		conv := core.Conversation{Gateway: gateway, Chat: strconv.Itoa(1000 + c)}
		for _, out := range outs {
			wg.Go(func() {
				_, err := out.Reply(ctx, conv, "hello", func(context.Context, gateways.Chunk) (string, error) {
					record(conv.Chat)
					return "m1", nil
				})
				if err != nil {
					t.Errorf("reply to %s: %v", conv.Key(), err)
					return
				}
				for range edits {
					err := out.Edit(ctx, conv, func(context.Context) error {
						record(conv.Chat)
						return nil
					})
					if err != nil {
						t.Errorf("edit in %s: %v", conv.Key(), err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if want := chats * len(outs) * (1 + edits); len(all) != want {
		t.Fatalf("%d requests went through; want %d", len(all), want)
	}
	b := Busiest{All: MostInWindow(all, per)}
	for _, times := range perChat {
		b.PerChat = max(b.PerChat, MostInWindow(times, per))
	}
	return b
}

// MostInWindow returns the most of times that fall in one window
// [t, t+per): the busiest window starts at one of the times.
func MostInWindow(times []time.Time, per time.Duration) int {
	times = slices.SortedFunc(slices.Values(times), time.Time.Compare)
	most := 0
	for i, t := range times {
		n := 0
		for _, u := range times[i:] {
			if u.Before(t.Add(per)) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}
