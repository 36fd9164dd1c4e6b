package cluster

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
)

// A message round-trips through its stored form with everything a turn
// on another instance needs; Schedule, Done and the attachments never do.
func TestSignalRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 27, 2, 3, 4, 5, time.UTC)
	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "gw", Chat: "-100", Thread: "7"},
		From: "gw:42", Text: "héllo\n\x00 <b>", MessageID: "991", Private: true, At: at,
		Attachments: []core.Attachment{{Name: "a.png"}}, Schedule: "never", Done: func() {}}
	b, err := encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != s.Kind || got.Conv != s.Conv || got.From != s.From || got.Text != s.Text ||
		got.MessageID != s.MessageID || !got.Private || !got.At.Equal(at) {
		t.Fatalf("round trip: %+v; want %+v", got, s)
	}
	if got.Schedule != "" || got.Done != nil || got.Attachments != nil {
		t.Fatalf("carried over: schedule %q, done %v, attachments %v", got.Schedule, got.Done != nil, got.Attachments)
	}
	for _, bad := range []string{`not json`, `{"kind":2,"gateway":"gw","chat":"1"}`, `{"kind":1,"chat":"1"}`,
		`{"kind":1,"gateway":"gw","chat":"1","text":"` + strings.Repeat("x", maxData) + `"}`} {
		if _, err := decode([]byte(bad)); err == nil {
			t.Errorf("decode(%.40q): no error", bad)
		}
	}
}

// A redelivered message has the key of its first delivery; a message
// without an id gets one of its own.
func TestMessageKey(t *testing.T) {
	s := core.Signal{Conv: core.Conversation{Gateway: "gw", Chat: "5", Thread: "1"}, MessageID: "9"}
	if messageKey(s) != "5/9" || messageKey(s) != messageKey(s) {
		t.Fatalf("key %q", messageKey(s))
	}
	s.MessageID = ""
	if a, b := messageKey(s), messageKey(s); a == b {
		t.Fatalf("two messages without an id share the key %q", a)
	}
}

// runner records the turns it is given; ran decides what it reports;
// with hold, each turn lasts until CancelTurn stops it.
type runner struct {
	mu      sync.Mutex
	got     []core.Journaled
	ran     func(n int) bool
	runs    chan core.Journaled
	hold    bool
	stopped chan core.Conversation
}

func newRunner() *runner {
	return &runner{runs: make(chan core.Journaled, 16), stopped: make(chan core.Conversation, 16)}
}

func (r *runner) RunJournaled(_ context.Context, j core.Journaled) (bool, error) {
	r.mu.Lock()
	r.got = append(r.got, j)
	n := len(r.got)
	r.mu.Unlock()
	r.runs <- j
	if r.hold {
		select {
		case conv := <-r.stopped:
			if conv != j.Signal.Conv {
				return true, errors.New("stopped another conversation: " + conv.Key())
			}
		case <-time.After(testutil.HangGuard):
			return false, errors.New("never stopped")
		}
	}
	if r.ran != nil {
		return r.ran(n), nil
	}
	return true, j.Record(context.Background(), core.StageReplied)
}

func (r *runner) CancelTurn(conv core.Conversation) bool {
	r.stopped <- conv
	return true
}

func (r *runner) next(t *testing.T) core.Journaled {
	t.Helper()
	select {
	case j := <-r.runs:
		return j
	case <-time.After(testutil.HangGuard):
		t.Fatal("no turn run")
		return core.Journaled{}
	}
}

// open opens the database dsn names for the test.
func open(t *testing.T, dsn string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// start builds an Inbox of instance name on st for gateway "gw" and runs
// it with r until the test ends.
func start(t *testing.T, st store.Inbox, name string, r *runner) *Inbox {
	t.Helper()
	return startTTL(t, st, name, r, time.Hour)
}

// startTTL is start with claims of ttl.
func startTTL(t *testing.T, st store.Inbox, name string, r *runner, ttl time.Duration) *Inbox {
	t.Helper()
	in, err := New(Config{Store: st, Instance: name, TTL: ttl, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	in.UseGateways([]string{"gw"})
	if r != nil {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- in.Run(ctx, r) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	return in
}

func msg(chat, id string, files int) core.Signal {
	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "gw", Chat: chat}, From: "gw:1",
		Text: "m" + id, MessageID: id, At: time.Now()}
	for range files {
		s.Attachments = append(s.Attachments, core.Attachment{Name: "f.txt"})
	}
	return s
}

// A message with files stays with the instance that received them (it
// holds their Fetchers): no other instance claims it while the receiver
// lives, and the receiver runs it with its files. A message of a gateway
// the inbox does not take is left to memory.
func TestFilesStayWithTheReceiver(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := open(t, dsn), open(t, dsn)
	in := start(t, a, "a", nil)
	ctx := context.Background()
	if took, err := in.Put(ctx, core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "other", Chat: "1"}}); took || err != nil {
		t.Fatalf("Put of another gateway's message = %v, %v; want false", took, err)
	}
	if took, err := in.Put(ctx, msg("1", "10", 2)); !took || err != nil {
		t.Fatalf("Put = %v, %v", took, err)
	}
	if took, err := in.Put(ctx, msg("1", "10", 2)); !took || err != nil {
		t.Fatalf("Put of a redelivery = %v, %v; want taken", took, err)
	}
	if _, ok, err := b.ClaimInbox(ctx, "b", []string{"gw"}, time.Hour); ok || err != nil {
		t.Fatalf("another instance claimed a message whose files the receiver holds: %v, %v", ok, err)
	}
	r := newRunner()
	ctxRun, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- in.Run(ctxRun, r) }()
	j := r.next(t)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(j.Signal.Attachments) != 2 || j.FilesLost != 0 || j.Signal.Text != "m10" {
		t.Fatalf("run %+v; want the message with its two files", j)
	}
}

// Taken over from a receiver that is gone, a message's files are told
// lost; a turn that did not run is given back and claimed again; the
// stage an earlier run recorded comes with the takeover.
func TestTakeoverAndGiveBack(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := open(t, dsn), open(t, dsn)
	ctx := context.Background()
	if _, _, err := a.PutInbox(ctx, store.InboxEntry{Gateway: "gw", Key: "1/5", Conv: "gw:1", Data: mustEncode(t, msg("1", "5", 0)),
		Files: 1, Receiver: "gone"}, 0); err != nil {
		t.Fatal(err)
	}
	r := newRunner()
	r.ran = func(n int) bool { return n > 1 } // the first run does not begin
	start(t, b, "b", r)
	first, again := r.next(t), r.next(t)
	if first.FilesLost != 1 || again.FilesLost != 1 || again.Signal.MessageID != "5" {
		t.Fatalf("runs %+v, %+v; want the lost file told both times", first, again)
	}
	waitDone(t, dsn)
}

func mustEncode(t *testing.T, s core.Signal) []byte {
	t.Helper()
	b, err := encode(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitDone waits until every entry in the database dsn names is done.
func waitDone(t *testing.T, dsn string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	testutil.WaitFor(t, "every inbox entry done", func() bool {
		var n int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM inbox WHERE done = 0`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
}

// A Put the store cannot take fails with core.ErrUnavailable.
func TestPutUnavailable(t *testing.T) {
	db := open(t, pgtest.DSN(t))
	in := start(t, db, "a", nil)
	db.Close()
	_, err := in.Put(context.Background(), msg("1", "1", 0))
	if !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("Put on a closed store = %v; want ErrUnavailable", err)
	}
}

// /cancel typed to one instance stops the conversation's turn running on
// another (through a notification, or the holder's next renewal when the
// notification came before it listened); a conversation with no turn
// running anywhere is not cancelled.
func TestCancelReachesTheHolder(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := open(t, dsn), open(t, dsn)
	ctx := context.Background()
	in := start(t, a, "a", nil)
	if _, err := in.Put(ctx, msg("7", "1", 0)); err != nil {
		t.Fatal(err)
	}
	r := newRunner()
	r.hold = true
	startTTL(t, b, "b", r, time.Second)
	j := r.next(t)
	if ok, err := in.CancelElsewhere(ctx, core.Conversation{Gateway: "gw", Chat: "8"}); ok || err != nil {
		t.Fatalf("CancelElsewhere of an idle conversation = %v, %v; want false", ok, err)
	}
	if ok, err := in.CancelElsewhere(ctx, j.Signal.Conv); !ok || err != nil {
		t.Fatalf("CancelElsewhere = %v, %v; want true", ok, err)
	}
	waitDone(t, dsn) // the turn stopped and was marked done
}

// The longest message engine.max_message allows, all of it characters
// JSON escapes, still round-trips.
func TestLongestMessageRoundTrips(t *testing.T) {
	s := msg("1", "1", 0)
	s.Text = strings.Repeat("\x01", 1<<20)
	b, err := encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decode(b)
	if err != nil || got.Text != s.Text {
		t.Fatalf("decode of %d bytes: %v", len(b), err)
	}
}
