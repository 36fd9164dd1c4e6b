package gateways

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// platformError is a failure the fake platform answers with; it carries
// its own classification.
type platformError struct{ f Failure }

func (e *platformError) Error() string { return "platform says " + e.f.Verdict.String() }

func classifyTest(err error) Failure {
	var pe *platformError
	if errors.As(err, &pe) {
		return pe.f
	}
	return Failure{Verdict: Transient}
}

var (
	transientErr = &platformError{Failure{Verdict: Transient}}
	permanentErr = &platformError{Failure{Verdict: Permanent}}
)

func retryAfter(d time.Duration, global bool) error {
	return &platformError{Failure{Verdict: RetryAfter, After: d, Global: global}}
}

// attempt is one request the fake platform received.
type attempt struct {
	conv string
	text string
	at   time.Time
	ok   bool
}

// fakePlatform records attempts and fails them as scripted, per text.
type fakePlatform struct {
	mu       sync.Mutex
	attempts []attempt
	script   map[string][]error // the errors a text's next attempts get
	always   error              // every attempt fails with it when set
	ids      int
}

func newFakePlatform() *fakePlatform { return &fakePlatform{script: map[string][]error{}} }

func (f *fakePlatform) failNext(text string, errs ...error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script[text] = append(f.script[text], errs...)
}

func (f *fakePlatform) try(conv core.Conversation, text string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.always
	if q := f.script[text]; err == nil && len(q) > 0 {
		err, f.script[text] = q[0], q[1:]
	}
	f.attempts = append(f.attempts, attempt{conv: conv.Key(), text: text, at: time.Now(), ok: err == nil})
	if err != nil {
		return "", err
	}
	f.ids++
	return fmt.Sprint(f.ids), nil
}

func (f *fakePlatform) send(conv core.Conversation) SendFunc {
	return func(_ context.Context, c Chunk) (string, error) { return f.try(conv, c.Text) }
}

func (f *fakePlatform) log() []attempt {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]attempt(nil), f.attempts...)
}

// delivered lists the texts delivered, in order, as "conv text".
func (f *fakePlatform) delivered() []string {
	var out []string
	for _, a := range f.log() {
		if a.ok {
			out = append(out, a.conv+" "+a.text)
		}
	}
	return out
}

func testOutbox(t *testing.T, logs *testutil.SyncBuffer, tune func(*OutboxConfig)) *Outbox {
	t.Helper()
	cfg := OutboxConfig{
		Limit:    10,
		Backoff:  Backoff{Min: time.Second, Max: 8 * time.Second},
		RetryFor: time.Minute,
		Classify: classifyTest,
		Log:      zerolog.New(logs).Level(zerolog.DebugLevel),
	}
	if tune != nil {
		tune(&cfg)
	}
	o, err := NewOutbox(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

var (
	convA = core.Conversation{Gateway: "test", Chat: "a"}
	convB = core.Conversation{Gateway: "test", Chat: "b"}
)

// A chunk that fails twice then succeeds is still delivered before the
// reply's next chunk and before the next reply to the conversation; a
// reply to another conversation is not held up meanwhile.
func TestOrderUnderRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePlatform()
		o := testOutbox(t, &testutil.SyncBuffer{}, nil)
		f.failNext("one two ", transientErr, retryAfter(5*time.Second, false))
		done := make(chan error, 3)
		go func() {
			_, err := o.Reply(context.Background(), convA, "one two three four", f.send(convA))
			done <- err
		}()
		synctest.Wait() // the first chunk is waiting to be retried
		go func() {
			_, err := o.Reply(context.Background(), convA, "next", f.send(convA))
			done <- err
		}()
		synctest.Wait()
		go func() {
			_, err := o.Reply(context.Background(), convB, "other", f.send(convB))
			done <- err
		}()
		for range 3 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		want := []string{"test:b other", "test:a one two ", "test:a three four", "test:a next"}
		if got := f.delivered(); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("delivered %q, want %q", got, want)
		}
		if st := o.Stats(); st.Sent != 4 || st.Retried != 2 || st.Failed != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// No attempt to the paused chat goes out before the retry-after has
// passed, not even another conversation's in the same chat; other chats
// go on. A global retry-after holds every chat.
func TestRetryAfterHonoured(t *testing.T) {
	for _, global := range []bool{false, true} {
		t.Run(fmt.Sprint("global=", global), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFakePlatform()
				o := testOutbox(t, &testutil.SyncBuffer{}, nil)
				f.failNext("hi", retryAfter(7*time.Second, global))
				start := time.Now()
				thread := core.Conversation{Gateway: "test", Chat: "a", Thread: "t1"}
				errs := make(chan error, 3)
				go func() { _, err := o.Reply(context.Background(), convA, "hi", f.send(convA)); errs <- err }()
				synctest.Wait()
				go func() { _, err := o.Reply(context.Background(), thread, "in thread", f.send(thread)); errs <- err }()
				go func() { _, err := o.Reply(context.Background(), convB, "elsewhere", f.send(convB)); errs <- err }()
				for range 3 {
					if err := <-errs; err != nil {
						t.Fatal(err)
					}
				}
				for _, a := range f.log()[1:] {
					held := strings.HasPrefix(a.conv, "test:a") || global
					if held && a.at.Before(start.Add(7*time.Second)) {
						t.Errorf("%s %q sent %v after the 7s retry-after", a.conv, a.text, a.at.Sub(start))
					}
					if !held && a.at != start {
						t.Errorf("%s %q held up %v by another chat's pause", a.conv, a.text, a.at.Sub(start))
					}
				}
				if len(f.delivered()) != 3 {
					t.Fatalf("delivered %q", f.delivered())
				}
			})
		})
	}
}

func TestPermanentErrorNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePlatform()
		logs := &testutil.SyncBuffer{}
		o := testOutbox(t, logs, nil)
		f.failNext("one two ", permanentErr)
		_, err := o.Reply(context.Background(), convA, "one two three four", f.send(convA))
		if !errors.Is(err, permanentErr) || !strings.Contains(err.Error(), "chunk 1 of 2") {
			t.Fatalf("err = %v", err)
		}
		if n := len(f.log()); n != 1 {
			t.Fatalf("%d attempts, want 1 and none of the later chunk", n)
		}
		if st := o.Stats(); st.Failed != 1 || st.Retried != 0 {
			t.Fatalf("stats %+v", st)
		}
		assertFailureLogged(t, logs.String(), "test:a")
	})
}

// assertFailureLogged checks for an error-level line naming conv.
func assertFailureLogged(t *testing.T, logs, conv string) {
	t.Helper()
	for line := range strings.SplitSeq(logs, "\n") {
		if strings.Contains(line, `"level":"error"`) && strings.Contains(line, `"conv":"`+conv+`"`) &&
			strings.Contains(line, "not delivered") {
			return
		}
	}
	t.Fatalf("no error line with conv %s:\n%s", conv, logs)
}

// Transient failures are retried with backoff until RetryFor has passed
// since the first failure, then the reply fails, logged with the
// conversation key and counted.
func TestDeadlineBoundsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePlatform()
		f.always = transientErr
		logs := &testutil.SyncBuffer{}
		o := testOutbox(t, logs, nil)
		start := time.Now()
		_, err := o.Reply(context.Background(), convB, "hi", f.send(convB))
		if err == nil || !strings.Contains(err.Error(), "giving up") || !errors.Is(err, transientErr) {
			t.Fatalf("err = %v", err)
		}
		tries := f.log()
		if len(tries) < 8 {
			t.Fatalf("%d attempts in a minute of 1s-8s backoff, want retries", len(tries))
		}
		if last := tries[len(tries)-1].at.Sub(start); last != time.Minute {
			t.Fatalf("last attempt %v after the first failure, want at the 1m deadline", last)
		}
		for i := 1; i < len(tries); i++ {
			if gap := tries[i].at.Sub(tries[i-1].at); gap > 8*time.Second {
				t.Fatalf("gap %v between attempts, past the backoff cap", gap)
			}
		}
		if st := o.Stats(); st.Failed != 1 || st.Sent != 0 {
			t.Fatalf("stats %+v", st)
		}
		assertFailureLogged(t, logs.String(), "test:b")
	})
}

// A retry-after that ends past the deadline ends the retries at once,
// without an attempt before it.
func TestRetryAfterPastDeadlineGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePlatform()
		o := testOutbox(t, &testutil.SyncBuffer{}, nil)
		f.failNext("hi", retryAfter(2*time.Minute, false))
		start := time.Now()
		_, err := o.Reply(context.Background(), convA, "hi", f.send(convA))
		if err == nil || !strings.Contains(err.Error(), "past the 1m0s retry deadline") {
			t.Fatalf("err = %v", err)
		}
		if n := len(f.log()); n != 1 || time.Since(start) != 0 {
			t.Fatalf("%d attempts over %v", n, time.Since(start))
		}
		if o.Stats().Failed != 1 {
			t.Fatalf("stats %+v", o.Stats())
		}
		// The pause still holds the chat: the next reply waits it out
		// rather than lengthen it.
		if !o.Paused(convA) {
			t.Fatal("the chat is not paused after a retry-after past the deadline")
		}
		if _, err := o.Reply(context.Background(), convA, "next", f.send(convA)); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 2*time.Minute {
			t.Fatalf("the next reply went out %v after the 429, want after its 2m retry-after", waited)
		}
	})
}

// A "retry at once" verdict retries without a pause, once; a second in a
// row backs off like a transient failure.
func TestRetryAtOnceDoesNotSpin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePlatform()
		o := testOutbox(t, &testutil.SyncBuffer{}, nil)
		now := retryAfter(0, false)
		f.failNext("hi", now, now)
		start := time.Now()
		if _, err := o.Reply(context.Background(), convA, "hi", f.send(convA)); err != nil {
			t.Fatal(err)
		}
		tries := f.log()
		if len(tries) != 3 || tries[1].at != start || !tries[2].at.After(start) {
			t.Fatalf("attempts at %v", tries)
		}
	})
}

// Cancelling ctx ends a reply waiting on a retry and one waiting for its
// conversation's turn: both return the context's error, nothing more is
// sent, and a shutdown is not counted as a delivery failure.
func TestCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePlatform()
		f.always = transientErr
		logs := &testutil.SyncBuffer{}
		o := testOutbox(t, logs, nil)
		ctx, cancel := context.WithCancel(context.Background())
		errs := make(chan error, 2)
		go func() { _, err := o.Reply(ctx, convA, "first", f.send(convA)); errs <- err }()
		synctest.Wait()
		go func() { _, err := o.Reply(ctx, convA, "second", f.send(convA)); errs <- err }()
		synctest.Wait()
		before := len(f.log())
		cancel()
		for range 2 {
			if err := <-errs; !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
		}
		synctest.Wait()
		if n := len(f.log()); n != before {
			t.Fatalf("%d attempts after cancellation", n-before)
		}
		if st := o.Stats(); st.Failed != 0 {
			t.Fatalf("a shutdown counted as failure: %+v", st)
		}
		if !strings.Contains(logs.String(), "shutting down") {
			t.Fatalf("the cut reply is not logged:\n%s", logs)
		}
		// The conversation is free again.
		f.always = nil
		if _, err := o.Reply(context.Background(), convA, "later", f.send(convA)); err != nil {
			t.Fatal(err)
		}
	})
}

// An attempt cut by the cancellation is not classified: whatever its
// error, the reply ends with the context's error and no failure counted.
func TestCancelledAttemptIsNotAFailure(t *testing.T) {
	o := testOutbox(t, &testutil.SyncBuffer{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := o.Reply(ctx, convA, "hi", func(context.Context, Chunk) (string, error) {
		cancel() // the shutdown comes while the request is out
		return "", permanentErr
	})
	if !errors.Is(err, context.Canceled) || o.Stats().Failed != 0 {
		t.Fatalf("err %v, stats %+v", err, o.Stats())
	}
}

// Edits go through the same order, pacing and retries as sends.
func TestEditOrderedWithSends(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePlatform()
		o := testOutbox(t, &testutil.SyncBuffer{}, func(c *OutboxConfig) {
			c.Pace = Limits{PerChat: Limit{N: 1, Per: time.Second}}
		})
		f.failNext("hi", transientErr)
		ids, err := o.Reply(context.Background(), convA, "hi", f.send(convA))
		if err != nil || len(ids) != 1 {
			t.Fatalf("ids %v, err %v", ids, err)
		}
		f.failNext("edit "+ids[0], retryAfter(3*time.Second, false))
		sent := time.Now()
		err = o.Edit(context.Background(), convA, func(context.Context) error {
			_, err := f.try(convA, "edit "+ids[0])
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		tries := f.log()
		if len(tries) != 4 || tries[2].at.Sub(sent) != time.Second || tries[3].at.Sub(tries[2].at) != 3*time.Second {
			t.Fatalf("attempts %+v", tries)
		}
		if st := o.Stats(); st.Sent != 1 || st.Edited != 1 || st.Retried != 2 {
			t.Fatalf("stats %+v", st)
		}
	})
}

func TestReplySplitsAndSkipsBlank(t *testing.T) {
	f := newFakePlatform()
	o := testOutbox(t, &testutil.SyncBuffer{}, func(c *OutboxConfig) { c.Limit, c.Measure = 4, UTF16Len })
	var chunks []Chunk
	ids, err := o.Reply(context.Background(), convA, "😀😀 😀😀\n\n\n\n\nend", func(ctx context.Context, c Chunk) (string, error) {
		chunks = append(chunks, c)
		return f.try(convA, c.Text)
	})
	if err != nil || len(ids) != 3 {
		t.Fatalf("ids %v, err %v", ids, err)
	}
	// Split gives "😀😀" " " "😀😀" "\n\n\n\n" "\nend"; the blank ones go.
	want := []Chunk{{"😀😀", 0, 3}, {"😀😀", 1, 3}, {"\nend", 2, 3}}
	if fmt.Sprint(chunks) != fmt.Sprint(want) || !chunks[2].Last() || chunks[1].Last() {
		t.Fatalf("chunks %+v, want %+v", chunks, want)
	}
	if ids, err := o.Reply(context.Background(), convA, " \n\t", f.send(convA)); ids != nil || err != nil {
		t.Fatalf("blank reply: %v %v", ids, err)
	}
	if len(f.log()) != 3 {
		t.Fatalf("attempts %+v", f.log())
	}
}

func TestNewOutboxChecksConfig(t *testing.T) {
	for _, cfg := range []OutboxConfig{{Classify: classifyTest}, {Limit: 10}} {
		if _, err := NewOutbox(cfg); err == nil {
			t.Errorf("NewOutbox(%+v) accepted", cfg)
		}
	}
}

// BenchmarkOutboxReply is the layer's own cost for a one-chunk reply that
// is delivered at once: splitting, the conversation's turn, the pacer's
// windows (limits that never make it wait) and the counters.
func BenchmarkOutboxReply(b *testing.B) {
	o, err := NewOutbox(OutboxConfig{
		Limit:    4000,
		Measure:  UTF16Len,
		Pace:     Limits{Global: Limit{N: 30, Per: time.Nanosecond}, PerChat: Limit{N: 1, Per: time.Nanosecond}},
		Classify: classifyTest,
		Log:      zerolog.Nop(),
	})
	if err != nil {
		b.Fatal(err)
	}
	send := func(context.Context, Chunk) (string, error) { return "1", nil }
	convs := make([]core.Conversation, 100)
	for i := range convs {
		convs[i] = core.Conversation{Gateway: "bench", Chat: fmt.Sprint(i)}
	}
	text := strings.Repeat("a short answer with some words ", 10)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := o.Reply(ctx, convs[i%len(convs)], text, send); err != nil {
			b.Fatal(err)
		}
	}
}
