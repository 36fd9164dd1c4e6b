package cluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/gateways"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestRowWritesPerMessageInABurst: messages that arrive while their
// conversations are busy and every turn slot is taken (a burst) write no
// more rows each than one answered alone (maxRowWrites): put, then done,
// with no claim of their own. The turn that ends takes the next one in
// the row write that marks it done (FinishNextInbox). Counted exactly, as
// TestRowWritesPerMessage counts, with one claim allowed per turn slot: a
// slot's first turn of the burst may be claimed rather than put claimed
// (the claim loop, looking for work, holds a slot for a moment).
func TestRowWritesPerMessageInABurst(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := open(t, dsn)
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	f := fakeoai.Start(t)
	var hold atomic.Bool // the model answers nothing while set
	f.Respond(func(fakeoai.Request) fakeoai.Step {
		return fakeoai.Text(fakeoai.DefaultAnswer).Until(func() bool { return !hold.Load() })
	})
	prov, err := llm.NewOpenAI(llm.OpenAIConfig{Name: "p", BaseURL: f.URL(), APIKey: "test-key-123456", Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	const slots = 2
	in, err := New(Config{Store: db, Instance: "a", TTL: time.Hour, Poll: 20 * time.Millisecond, Slots: slots, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	in.UseGateways([]string{"gw"})
	eng, err := core.NewEngine(core.Config{
		Provider: llm.NewCascade(log, prov), Tools: tools.NewRegistry(tools.Options{Log: log}),
		Auth: core.NewAuth(map[string][]string{"gw": {"*"}}, nil), History: db, Usage: db, Journal: in,
		Model: "test-model", Log: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := gateways.NewOutbox(gateways.OutboxConfig{Limit: 4096, Log: log, Sender: "gw:1",
		Pace:         gateways.Limits{Global: gateways.Limit{N: 1000, Per: time.Second}, PerChat: gateways.Limit{N: 100, Per: time.Second}},
		Classify:     func(error) gateways.Failure { return gateways.Failure{Verdict: gateways.Permanent} },
		Shared:       &gateways.Shared{Slots: Slots{St: db}, Journal: NewReplies(db, "a")},
		SlotLateness: time.Hour}) // as in TestRowWritesPerMessage
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	sent := 0
	if err := eng.Register("gw", core.ActuatorFunc(func(ctx context.Context, a core.Action) (core.Result, error) {
		_, err := ob.Reply(ctx, a.Conv, a.Text, func(context.Context, gateways.Chunk) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			sent++
			return fmt.Sprint(sent), nil
		})
		return core.Result{}, err
	})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	engDone, inDone := make(chan struct{}), make(chan struct{})
	go func() { defer close(engDone); _ = eng.Run(ctx) }()
	go func() { defer close(inDone); _ = in.Run(ctx, eng) }()
	t.Cleanup(func() { cancel(); <-inDone; <-engDone })

	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	count := func(q string) int {
		t.Helper()
		var n int
		if err := conn.QueryRow(context.Background(), q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := 0
	submit := func(chat string) {
		t.Helper()
		n++
		if err := eng.Submit(context.Background(), msg(chat, fmt.Sprint(n), 0)); err != nil {
			t.Fatal(err)
		}
	}
	answered := func(what string) {
		t.Helper()
		testutil.WaitFor(t, what, func() bool {
			mu.Lock()
			got := sent
			mu.Unlock()
			return got == n && count(`SELECT count(*) FROM inbox WHERE done = 0`) == 0
		})
	}
	// Each conversation's first turn creates its rows (a send slot, the
	// day's usage): what is counted is conversations going on.
	chats := []string{"1", "2", "3", "4"}
	for _, c := range chats {
		submit(c)
		answered("the first turn of chat " + c)
	}
	countWrites(t, conn)
	// The burst: the model holds its answers until every message is in,
	// so that all but the two turns the slots run wait in the inbox
	// behind their conversations' earlier messages.
	hold.Store(true)
	const messages = 40
	for i := range messages {
		submit(chats[i%len(chats)])
	}
	testutil.WaitFor(t, "the burst in the inbox", func() bool {
		return count(`SELECT count(*) FROM inbox WHERE done = 0`) == messages
	})
	queued := count(`SELECT count(*) FROM inbox WHERE done = 0 AND claimed = 0`)
	hold.Store(false)
	answered("the burst answered")
	if queued < messages-slots {
		t.Fatalf("%d of %d messages waited in the inbox; want all but the %d the turn slots took", queued, messages, slots)
	}
	// Each message ran its own turn from the start: its question and its
	// answer in the history.
	if q, a := count(`SELECT count(*) FROM messages WHERE role = 'user'`), count(`SELECT count(*) FROM messages WHERE role = 'assistant'`); q != n || a != n {
		t.Fatalf("the history has %d questions and %d answers; want %d of each", q, a, n)
	}
	byTable := writesByTable(t, conn)
	total := 0
	var parts []string
	for _, tbl := range slices.Sorted(maps.Keys(byTable)) {
		total += byTable[tbl]
		parts = append(parts, fmt.Sprintf("%s %.2f", tbl, float64(byTable[tbl])/messages))
	}
	per := float64(total) / messages
	t.Logf("rows written per message in a burst: %.2f (%s)", per, strings.Join(parts, ", "))
	if most := maxRowWrites + float64(slots)/messages; per > most {
		t.Errorf("%.2f rows written per message in a burst (%s); want at most %.2f (%d, and a claim per turn slot)",
			per, strings.Join(parts, ", "), most, maxRowWrites)
	}
}
