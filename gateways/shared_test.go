package gateways_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// telegramPace is Telegram's limits, as its gateway sets them.
var telegramPace = gateways.Limits{
	PerChat: gateways.Limit{N: 1, Per: time.Second},
	Global:  gateways.Limit{N: 30, Per: time.Second},
}

// windowSlots is a SlotReserver that one store would be for several
// instances: the reservations under each key, kept as the store keeps
// them (a sliding window: at most N in any window of Per, a request
// taking the earliest time that fits every limit asked). It checks that
// the limits asked for are the platform's.
type windowSlots struct {
	t     *testing.T
	limit gateways.Limits
	err   error // when set, every reservation fails with it (the store down)

	mu    sync.Mutex
	times map[string][]time.Time // sorted
}

func newWindowSlots(t *testing.T, l gateways.Limits) *windowSlots {
	// The Outbox asks for the platform's limits, each window longer by
	// the margin.
	l.PerChat.Per += gateways.SharedMargin
	l.Global.Per += gateways.SharedMargin
	return &windowSlots{t: t, limit: l, times: map[string][]time.Time{}}
}

func (s *windowSlots) ReserveSlot(_ context.Context, slots ...gateways.Slot) (time.Duration, error) {
	if s.err != nil {
		return 0, s.err
	}
	chat := false
	for _, sl := range slots {
		switch {
		case strings.Contains(sl.Key, ":chat:"):
			chat = true
			if sl.Limit != s.limit.PerChat {
				s.t.Errorf("slot %q asks %+v; want the per-chat limit %+v", sl.Key, sl.Limit, s.limit.PerChat)
			}
		case sl.Limit != s.limit.Global:
			s.t.Errorf("slot %q asks %+v; want the global limit %+v", sl.Key, sl.Limit, s.limit.Global)
		}
	}
	if !chat {
		s.t.Errorf("slots %+v: none for the chat", slots)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	cands := []time.Time{now}
	for _, sl := range slots {
		for _, at := range s.times[sl.Key] {
			if c := at.Add(sl.Limit.Per); c.After(now) {
				cands = append(cands, c)
			}
		}
	}
	slices.SortFunc(cands, time.Time.Compare)
	for _, x := range cands {
		if !slices.ContainsFunc(slots, func(sl gateways.Slot) bool { return !fitsWindow(s.times[sl.Key], sl.Limit, x) }) {
			for _, sl := range slots {
				ts := append(s.times[sl.Key], x)
				slices.SortFunc(ts, time.Time.Compare)
				s.times[sl.Key] = ts
			}
			return x.Sub(now), nil
		}
	}
	s.t.Fatal("no candidate fits")
	return 0, nil
}

// fitsWindow reports whether a request at x keeps times within l.
func fitsWindow(times []time.Time, l gateways.Limit, x time.Time) bool {
	n := 0
	for _, at := range times {
		if at.After(x.Add(-l.Per)) && at.Before(x.Add(l.Per)) {
			n++
		}
	}
	if n < l.N {
		return true
	}
	// Every window of Per that holds x, starting at x-Per+ε … x.
	for _, start := range append([]time.Time{x}, times...) {
		if start.After(x) || !start.After(x.Add(-l.Per)) {
			continue
		}
		in := 1
		for _, at := range times {
			if !at.Before(start) && at.Before(start.Add(l.Per)) {
				in++
			}
		}
		if in > l.N {
			return false
		}
	}
	return true
}

func sharedOutbox(t *testing.T, shared *gateways.Shared, logs *testutil.SyncBuffer) *gateways.Outbox {
	t.Helper()
	log := zerolog.Nop()
	if logs != nil {
		log = zerolog.New(logs)
	}
	out, err := gateways.NewOutbox(gateways.OutboxConfig{
		Limit:    10,
		Pace:     telegramPace,
		Classify: func(error) gateways.Failure { return gateways.Failure{Verdict: gateways.Permanent} },
		Log:      log,
		Shared:   shared,
		Sender:   "test:1",
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSharedPaceHoldsAcrossOutboxes: two Outboxes (two instances) sending
// for one token through one shared reserver (one store) put at most one
// request into one chat, and 30 into all chats, in any second, as one
// Outbox does alone; the shared limit is used to the full.
func TestSharedPaceHoldsAcrossOutboxes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &gateways.Shared{Slots: newWindowSlots(t, telegramPace)}
		outs := []*gateways.Outbox{sharedOutbox(t, shared, nil), sharedOutbox(t, shared, nil)}
		got := gatewaytest.BurstAcross(t, outs, "test", 40, 2, time.Second)
		if got != (gatewaytest.Busiest{PerChat: 1, All: 30}) {
			t.Errorf("busiest second of two instances: %+v; want 1 request in one chat and 30 in all", got)
		}
	})
}

// TestSharedPaceFallsBackToTheInstance: when the store does not answer,
// each Outbox paces on its own (its limits still hold for it), and says
// so once, not once a request.
func TestSharedPaceFallsBackToTheInstance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slots := newWindowSlots(t, telegramPace)
		slots.err = errors.New("connection refused")
		var logs testutil.SyncBuffer
		out := sharedOutbox(t, &gateways.Shared{Slots: slots}, &logs)
		got := gatewaytest.Burst(t, out, "test", 40, 2, time.Second)
		if got != (gatewaytest.Busiest{PerChat: 1, All: 30}) {
			t.Errorf("busiest second without the store: %+v; want 1 request in one chat and 30 in all", got)
		}
		if n := strings.Count(logs.String(), "the store does not answer"); n != 1 {
			t.Errorf("the store's failure logged %d times; want once:\n%s", n, logs.String())
		}
	})
}

// recordingJournal is a Journal that records what it is told, in order
// with the sends (events).
type recordingJournal struct {
	mu     sync.Mutex
	events []string
	fail   bool
}

func (j *recordingJournal) add(e string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, e)
}

func (j *recordingJournal) log() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.events)
}

func (j *recordingJournal) Serve(sender string) { j.add("serve " + sender) }

func (j *recordingJournal) WriteReply(_ context.Context, sender string, conv core.Conversation, text string) (int64, error) {
	if j.fail {
		return 0, errors.New("connection refused")
	}
	j.add(fmt.Sprintf("write %s %s %q", sender, conv.Key(), text))
	return 41, nil
}

func (j *recordingJournal) ReplyProgress(_ context.Context, id int64, done int, final, failed bool) error {
	j.add(fmt.Sprintf("progress %d done=%d final=%v failed=%v", id, done, final, failed))
	return nil
}

// TestJournalledReply: with a journal, a reply is written before its
// first chunk is sent and each accepted chunk recorded, the last as
// final; a reply that finally fails is recorded failed after the chunks
// that went; a reply cut by a shutdown stays open (another instance sends
// it); a resumed reply (ResumeReply) writes nothing new, skips the chunks
// done and records under its id; a private answer (ReplyPrivate) is
// not written; a journal that fails does not stop the reply.
func TestJournalledReply(t *testing.T) {
	synctest.Test(t, testJournalledReply)
}

func testJournalledReply(t *testing.T) {
	conv := core.Conversation{Gateway: "test", Chat: "9", Thread: "3"}
	const text = "aaaa bbbb cccc dddd eeee ffff" // three chunks of at most 10
	j := &recordingJournal{}
	out := sharedOutbox(t, &gateways.Shared{Journal: j}, nil)
	if got := j.log(); !slices.Equal(got, []string{"serve test:1"}) {
		t.Errorf("a new Outbox told its journal %q; want that it serves test:1", got)
	}
	j.events = nil
	send := func(fail int, cancel func()) gateways.SendFunc {
		return func(_ context.Context, c gateways.Chunk) (string, error) {
			if c.Index == fail {
				if cancel != nil {
					cancel()
					return "", context.Canceled
				}
				return "", errors.New("refused")
			}
			j.add(fmt.Sprintf("send %d %q", c.Index, c.Text))
			return "m", nil
		}
	}
	check := func(what string, want ...string) {
		t.Helper()
		if got := j.log(); !slices.Equal(got, want) {
			t.Errorf("%s:\ngot  %q\nwant %q", what, got, want)
		}
		j.mu.Lock()
		j.events = nil
		j.mu.Unlock()
	}

	if _, err := out.Reply(context.Background(), conv, text, send(-1, nil)); err != nil {
		t.Fatal(err)
	}
	check("a reply", `write test:1 test:9:3 "`+text+`"`,
		`send 0 "aaaa bbbb "`, "progress 41 done=1 final=false failed=false",
		`send 1 "cccc dddd "`, "progress 41 done=2 final=false failed=false",
		`send 2 "eeee ffff"`, "progress 41 done=3 final=true failed=false")

	if _, err := out.Reply(context.Background(), conv, text, send(1, nil)); err == nil {
		t.Fatal("a refused chunk: no error")
	}
	check("a refused second chunk", `write test:1 test:9:3 "`+text+`"`,
		`send 0 "aaaa bbbb "`, "progress 41 done=1 final=false failed=false",
		"progress 41 done=1 final=true failed=true")

	ctx, cancel := context.WithCancel(context.Background())
	if _, err := out.Reply(ctx, conv, text, send(2, cancel)); err == nil {
		t.Fatal("a shutdown: no error")
	}
	check("a shutdown at the third chunk", `write test:1 test:9:3 "`+text+`"`,
		`send 0 "aaaa bbbb "`, "progress 41 done=1 final=false failed=false",
		`send 1 "cccc dddd "`, "progress 41 done=2 final=false failed=false",
		"progress 41 done=2 final=false failed=false")

	if _, err := out.Reply(gateways.ResumeReply(context.Background(), 7, 2), conv, text, send(-1, nil)); err != nil {
		t.Fatal(err)
	}
	check("another instance's reply with two chunks done", `send 2 "eeee ffff"`, "progress 7 done=3 final=true failed=false")

	if _, err := out.ReplyPrivate(context.Background(), conv, "only you", send(-1, nil)); err != nil {
		t.Fatal(err)
	}
	check("a private answer (another instance could only post it to everyone)", `send 0 "only you"`)

	j.fail = true
	if _, err := out.Reply(context.Background(), conv, "hello", send(-1, nil)); err != nil {
		t.Fatal(err)
	}
	check("the journal failing", `send 0 "hello"`)
}

// TestJournalledLiveReply: a live reply's final text is written before it
// is shown, and marked sent once the messages show it.
func TestJournalledLiveReply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j := &recordingJournal{}
		out := sharedOutbox(t, &gateways.Shared{Journal: j}, nil)
		j.events = nil
		conv := core.Conversation{Gateway: "test", Chat: "9"}
		live := out.StartLive(context.Background(), conv, gateways.LiveFuncs{
			Send: func(_ context.Context, text string, i int) (string, error) {
				j.add(fmt.Sprintf("send %d %q", i, text))
				return fmt.Sprint("m", i), nil
			},
			Edit: func(_ context.Context, id, text string) error {
				j.add(fmt.Sprintf("edit %s %q", id, text))
				return nil
			},
		})
		live.Update("Hello. ")
		synctest.Wait() // the preview, "Hello. ", shows (or waits) before the final text comes
		if err := live.Finish(context.Background(), "Hello. World"); err != nil {
			t.Fatal(err)
		}
		got := j.log()
		// The preview may show before Finish: the final text must be
		// written before anything shows it ("World"), and marked sent last.
		write := slices.Index(got, `write test:1 test:9 "Hello. World"`)
		shown := slices.IndexFunc(got, func(e string) bool { return strings.Contains(e, "World") && !strings.HasPrefix(e, "write ") })
		if write < 0 || shown < write || len(got) < 3 ||
			got[len(got)-1] != fmt.Sprintf("progress 41 done=%d final=true failed=false", len(out.Split("Hello. World"))) {
			t.Errorf("a live reply: %q; want the final text written before it shows, and marked sent last", got)
		}
	})
}

// lateSlots is a SlotReserver whose answers come late: each reservation's
// time had passed by then, by the next of lates (the last repeats).
type lateSlots struct {
	lates []time.Duration

	mu    sync.Mutex
	calls int
}

func (s *lateSlots) ReserveSlot(context.Context, ...gateways.Slot) (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	late := s.lates[min(s.calls, len(s.lates)-1)]
	s.calls++
	return -late, nil
}

func (s *lateSlots) reserved() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// TestMissedSlotIsReservedAgain: a request that would leave more than
// SlotLateness after its shared slot (the store's answer came late, or
// the process woke late) reserves another instead of sending late; within
// SlotLateness it goes; a host late for every slot still sends, after
// reserving a few.
func TestMissedSlotIsReservedAgain(t *testing.T) {
	conv := core.Conversation{Gateway: "test", Chat: "9"}
	for _, tc := range []struct {
		name     string
		lates    []time.Duration
		reserved int
	}{
		{"on time", []time.Duration{0}, 1},
		{"within the lateness allowed", []time.Duration{gateways.SlotLateness}, 1},
		{"one slot missed", []time.Duration{gateways.SlotLateness + time.Millisecond, 0}, 2},
		{"two slots missed", []time.Duration{50 * time.Millisecond, 30 * time.Millisecond, time.Millisecond}, 3},
		{"late for every slot", []time.Duration{time.Second}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				slots := &lateSlots{lates: tc.lates}
				out := sharedOutbox(t, &gateways.Shared{Slots: slots}, nil)
				sent := 0
				if _, err := out.Reply(context.Background(), conv, "hello", func(context.Context, gateways.Chunk) (string, error) {
					sent++
					return "m", nil
				}); err != nil {
					t.Fatal(err)
				}
				if sent != 1 || slots.reserved() != tc.reserved {
					t.Errorf("sent %d times after %d reservations; want once after %d", sent, slots.reserved(), tc.reserved)
				}
			})
		})
	}
}
