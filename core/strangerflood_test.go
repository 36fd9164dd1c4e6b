package core_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// TestStrangerRepliesAreBoundedPerSecond: a flood of strangers, each
// writing once, gets at most core.StrangerBurst replies at once and
// core.StrangerRate a second after that, whatever their number (each
// reply is a message the bot sends to the platform, whose rate limits
// the allowed users share); a stranger not answered for the bound is
// answered when they write again later.
func TestStrangerRepliesAreBoundedPerSecond(t *testing.T) {
	a := core.NewAuth(map[string][]string{"test": {"test:alice"}}, nil)
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	told := func(from, to int, at time.Time) int {
		n := 0
		for i := from; i < to; i++ {
			s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "test", Chat: fmt.Sprint(i)},
				From: core.Identity(fmt.Sprintf("test:%d", i)), Private: true}
			if a.Refusal(s, at) != "" {
				n++
			}
		}
		return n
	}
	if n := told(0, 1000, now); n != core.StrangerBurst {
		t.Fatalf("1000 strangers at once got %d replies; want %d", n, core.StrangerBurst)
	}
	for sec := 1; sec <= 5; sec++ {
		if n := told(1000*sec, 1000*(sec+1), now.Add(time.Duration(sec)*time.Second)); n != core.StrangerRate {
			t.Fatalf("second %d: 1000 more strangers got %d replies; want %d", sec, n, core.StrangerRate)
		}
	}
	// The first stranger left unanswered is answered when they write
	// again once the flood is over.
	if n := told(core.StrangerBurst, core.StrangerBurst+1, now.Add(time.Minute)); n != 1 {
		t.Errorf("a stranger left unanswered in the flood got %d replies when writing again a minute later; want 1", n)
	}
}
