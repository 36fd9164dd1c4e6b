package gateways

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// A file's steps go out in order, a 429 on the upload step is retried
// after its retry-after (and no earlier), the reply queued behind the file
// waits for it, and the file counts as one message sent.
func TestFileStepsRetriedInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePlatform()
		o := testOutbox(t, &testutil.SyncBuffer{}, nil)
		f.failNext("upload", retryAfter(9*time.Second, false))
		step := func(name string) FileStep {
			return func(context.Context) error { _, err := f.try(convA, name); return err }
		}
		start := time.Now()
		done := make(chan error, 2)
		go func() { done <- o.File(context.Background(), convA, step("get url"), step("upload"), step("complete")) }()
		synctest.Wait() // the upload waits out its retry-after
		go func() { _, err := o.Reply(context.Background(), convA, "after", f.send(convA)); done <- err }()
		for range 2 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		want := "test:a get url|test:a upload|test:a complete|test:a after"
		if got := strings.Join(f.delivered(), "|"); got != want {
			t.Fatalf("delivered %q, want %q", got, want)
		}
		for _, a := range f.log()[2:] {
			if a.at.Before(start.Add(9 * time.Second)) {
				t.Errorf("%q sent %v after the 9s retry-after", a.text, a.at.Sub(start))
			}
		}
		if st := o.Stats(); st.Sent != 2 || st.Retried != 1 || st.Failed != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// A step that fails for good stops the file: the later steps are not
// made, and the failure is logged, counted and returned with the step.
func TestFileStepFailureStopsTheFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePlatform()
		logs := &testutil.SyncBuffer{}
		o := testOutbox(t, logs, nil)
		f.failNext("upload", permanentErr)
		step := func(name string) FileStep {
			return func(context.Context) error { _, err := f.try(convA, name); return err }
		}
		err := o.File(context.Background(), convA, step("get url"), step("upload"), step("complete"))
		if !errors.Is(err, permanentErr) || !strings.Contains(err.Error(), "step 2 of 3") {
			t.Fatalf("err = %v", err)
		}
		if n := len(f.log()); n != 2 {
			t.Fatalf("%d attempts, want 2 (no completion of a failed upload)", n)
		}
		if st := o.Stats(); st.Failed != 1 || st.Sent != 0 {
			t.Fatalf("stats %+v", st)
		}
		assertFailureLogged(t, logs.String(), "test:a")
	})
}
