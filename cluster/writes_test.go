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
	f := fakeoai.Start(t)
	// What is counted is the per-message path: a slot missed on a loaded
	// machine is reserved again, one more row (CI once saw send_slots
	// 1.1); gateways' TestMissedSlotIsReservedAgain has it.
	p := startCounted(t, dsn, f, 0, gateways.Limits{Global: gateways.Limit{N: 30, Per: time.Second}, PerChat: gateways.Limit{N: 1, Per: 10 * time.Millisecond}})
	answer := func(chat string) {
		t.Helper()
		p.submit(chat)
		p.answered("the reply sent and the entry done")
	}
	// The conversations' first turns create their rows (a send slot, the
	// day's usage): what is counted is a conversation going on.
	chats := []string{"1", "2"}
	for _, c := range chats {
		answer(c)
	}
	countWrites(t, p.conn)
	const messages = 10
	for i := range messages {
		answer(chats[i%len(chats)])
	}
	per, parts := rowsPerMessage(t, p.conn, messages, "%s %.1f")
	t.Logf("rows written per message: %.1f (%s)", per, parts)
	if per > maxRowWrites {
		t.Errorf("%.1f rows written per message (%s); want at most %d", per, parts, maxRowWrites)
	}
}

// counted is one instance's pipeline on a shared store, from the inbox to
// the outbox, whose row writes the tests count: replies go to a counter.
type counted struct {
	t    *testing.T
	eng  *core.Engine
	conn *pgx.Conn // for counting

	mu   sync.Mutex
	sent int // replies sent
	n    int // messages submitted
}

// startCounted starts the pipeline on a fresh database of dsn with the
// model f, slots turn slots (0: the default) and the outbox paced by pace.
// The send slot a reply misses on a loaded machine is not reserved again
// (SlotLateness): what is counted is the per-message path.
func startCounted(t *testing.T, dsn string, f *fakeoai.Server, slots int, pace gateways.Limits) *counted {
	t.Helper()
	db := open(t, dsn)
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	prov, err := llm.NewOpenAI(llm.OpenAIConfig{Name: "p", BaseURL: f.URL(), APIKey: "test-key-123456", Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
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
	ob, err := gateways.NewOutbox(gateways.OutboxConfig{Limit: 4096, Log: log, Sender: "gw:1", Pace: pace,
		Classify:     func(error) gateways.Failure { return gateways.Failure{Verdict: gateways.Permanent} },
		Shared:       &gateways.Shared{Slots: Slots{St: db}, Journal: NewReplies(db, "a")},
		SlotLateness: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	p := &counted{t: t, eng: eng}
	if err := eng.Register("gw", core.ActuatorFunc(func(ctx context.Context, a core.Action) (core.Result, error) {
		_, err := ob.Reply(ctx, a.Conv, a.Text, func(context.Context, gateways.Chunk) (string, error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.sent++
			return fmt.Sprint(p.sent), nil
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
	if p.conn, err = pgx.Connect(context.Background(), dsn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.conn.Close(context.Background()) })
	return p
}

// submit submits the next message, in chat.
func (p *counted) submit(chat string) {
	p.t.Helper()
	p.n++
	if err := p.eng.Submit(context.Background(), msg(chat, fmt.Sprint(p.n), 0)); err != nil {
		p.t.Fatal(err)
	}
}

// answered waits until every message submitted is answered and done.
func (p *counted) answered(what string) {
	p.t.Helper()
	testutil.WaitFor(p.t, what, func() bool {
		p.mu.Lock()
		got := p.sent
		p.mu.Unlock()
		return got == p.n && p.count(`SELECT count(*) FROM inbox WHERE done = 0`) == 0
	})
}

// count runs a query of one integer.
func (p *counted) count(q string) int {
	p.t.Helper()
	var n int
	if err := p.conn.QueryRow(context.Background(), q).Scan(&n); err != nil {
		p.t.Fatal(err)
	}
	return n
}

// rowsPerMessage is the rows written since countWrites per message of
// messages, and each table's share, formatted with format (name, share).
func rowsPerMessage(t *testing.T, conn *pgx.Conn, messages int, format string) (float64, string) {
	t.Helper()
	byTable := writesByTable(t, conn)
	total := 0
	var parts []string
	for _, tbl := range slices.Sorted(maps.Keys(byTable)) {
		total += byTable[tbl]
		parts = append(parts, fmt.Sprintf(format, tbl, float64(byTable[tbl])/float64(messages)))
	}
	return float64(total) / float64(messages), strings.Join(parts, ", ")
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
