package cluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
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

// maxRowWrites is the most rows a message may write to a shared store on
// its way through one instance (issue 34), the platform's update offset
// aside (a receiver's, once per batch of updates: see TestRowWritesPerMessage).
const maxRowWrites = 8

// TestRowWritesPerMessage: a message answered by one instance of a shared
// store writes at most maxRowWrites rows, counted exactly by a trigger on
// every table of the store (what pg_stat_user_tables counts as n_tup_ins,
// n_tup_upd and n_tup_del, with no wait for the server's statistics): its
// inbox entry put, claimed and done, the question and the answer in the
// history, the model's usage, the reply's send slot (the chat's row: the
// token's is only locked), and the reply written to the outbox and marked
// sent. The stages of the turn (in the history, replied) are read from the
// history rows, not written to the inbox row.
func TestRowWritesPerMessage(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := open(t, dsn)
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	f := fakeoai.Start(t)
	prov, err := llm.NewOpenAI(llm.OpenAIConfig{Name: "p", BaseURL: f.URL(), APIKey: "test-key-123456", Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	in, err := New(Config{Store: db, Instance: "a", TTL: time.Hour, Poll: 20 * time.Millisecond, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	in.UseGateways([]string{"gw"})
	eng, err := core.NewEngine(core.Config{
		Provider: llm.NewCascade(log, prov),
		Tools:    tools.NewRegistry(tools.Options{Log: log}),
		Auth:     core.NewAuth(map[string][]string{"gw": {"*"}}, nil),
		History:  db,
		Usage:    db,
		Journal:  in,
		Model:    "test-model",
		Log:      log,
	})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := gateways.NewOutbox(gateways.OutboxConfig{Limit: 4096, Log: log, Sender: "gw:1",
		Pace:     gateways.Limits{Global: gateways.Limit{N: 30, Per: time.Second}, PerChat: gateways.Limit{N: 1, Per: 10 * time.Millisecond}},
		Classify: func(error) gateways.Failure { return gateways.Failure{Verdict: gateways.Permanent} },
		Shared:   &gateways.Shared{Slots: Slots{St: db}, Journal: NewReplies(db, "a")},
		// What is counted is the per-message path: a slot missed on a
		// loaded machine is reserved again, one more row (CI once saw
		// send_slots 1.1); gateways' TestMissedSlotIsReservedAgain has it.
		SlotLateness: time.Hour})
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
	n := 0
	answer := func(chat string) {
		t.Helper()
		n++
		s := msg(chat, fmt.Sprint(n), 0)
		if err := eng.Submit(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, "the reply sent and the entry done", func() bool {
			mu.Lock()
			got := sent
			mu.Unlock()
			var open int
			if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM inbox WHERE done = 0`).Scan(&open); err != nil {
				t.Fatal(err)
			}
			return got == n && open == 0
		})
	}
	// The conversations' first turns create their rows (a send slot, the
	// day's usage): what is counted is a conversation going on.
	chats := []string{"1", "2"}
	for _, c := range chats {
		answer(c)
	}
	countWrites(t, conn)
	const messages = 10
	for i := range messages {
		answer(chats[i%len(chats)])
	}
	byTable := writesByTable(t, conn)
	total := 0
	var parts []string
	for _, tbl := range slices.Sorted(maps.Keys(byTable)) {
		total += byTable[tbl]
		parts = append(parts, fmt.Sprintf("%s %.1f", tbl, float64(byTable[tbl])/messages))
	}
	per := float64(total) / messages
	t.Logf("rows written per message: %.1f (%s)", per, strings.Join(parts, ", "))
	if per > maxRowWrites {
		t.Errorf("%.1f rows written per message (%s); want at most %d", per, strings.Join(parts, ", "), maxRowWrites)
	}
}

// countWrites makes every table of the database conn is connected to
// count each row inserted, updated or deleted from now on in row_writes.
func countWrites(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE row_writes (tbl TEXT NOT NULL)`,
		`CREATE FUNCTION count_row_write() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN INSERT INTO row_writes (tbl) VALUES (TG_TABLE_NAME); RETURN NULL; END $$`,
		`DO $$ DECLARE r record; BEGIN
			FOR r IN SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'row_writes' LOOP
				EXECUTE format('CREATE TRIGGER count_row_write AFTER INSERT OR UPDATE OR DELETE ON %I
					FOR EACH ROW EXECUTE FUNCTION count_row_write()', r.tablename);
			END LOOP; END $$`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("counting row writes: %v", err)
		}
	}
}

// writesByTable is the rows written to each table since countWrites.
func writesByTable(t *testing.T, conn *pgx.Conn) map[string]int {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT tbl, count(*) FROM row_writes GROUP BY tbl`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	var tbl string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&tbl, &n}, func() error { out[tbl] = n; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}
