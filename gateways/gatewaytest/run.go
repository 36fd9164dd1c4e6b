package gatewaytest

import (
	"context"
	"testing"
	"time"
)

// Runner runs a blocking Run function (a gateway's, or a whole app's) in
// a goroutine until the test stops it, and checks that it then returns
// nil, and soon.
type Runner struct {
	t      testing.TB
	what   string
	within time.Duration
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	err    error
	ran    bool
}

// NewRunner returns a Runner whose Context ends on Cancel or Stop. what
// names the function in failures ("Run", "app.Run"); Stop waits within
// for it to return.
func NewRunner(t testing.TB, what string, within time.Duration) *Runner {
	ctx, cancel := context.WithCancel(context.Background())
	return &Runner{t: t, what: what, within: within, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// Context is the context run is given; it may also be handed to what run
// belongs to, so that it ends with it.
func (r *Runner) Context() context.Context { return r.ctx }

// Go calls run with the Runner's context in a new goroutine. Call it once,
// after storing the Runner where run may look for it.
func (r *Runner) Go(run func(context.Context) error) {
	r.ran = true
	go func() {
		defer close(r.done)
		r.err = run(r.ctx)
	}()
}

// Cancel ends the context without waiting for run to return.
func (r *Runner) Cancel() { r.cancel() }

// Returned reports, without waiting, whether run has returned, and what.
func (r *Runner) Returned() (returned bool, err error) {
	select {
	case <-r.done:
		return true, r.err
	default:
		return false, nil
	}
}

// Stop cancels the context and waits for run to return: it fails the
// test when run returns an error, or has not returned within the
// Runner's time. A nil Runner, one never started, or one stopped already
// is only cancelled.
func (r *Runner) Stop() {
	if r == nil {
		return
	}
	r.t.Helper()
	r.cancel()
	if !r.ran {
		return
	}
	r.ran = false // a second Stop has nothing to check
	select {
	case <-r.done:
		if r.err != nil {
			r.t.Errorf("%s returned %v", r.what, r.err)
		}
	case <-time.After(r.within):
		r.t.Errorf("%s did not return within %v of cancellation", r.what, r.within)
	}
}
