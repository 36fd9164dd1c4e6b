package gateways_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// downLeaser is a lease store that fails while down is set, and grants
// the lease otherwise.
type downLeaser struct{ down atomic.Bool }

func (l *downLeaser) AcquireLease(context.Context, string, string, time.Duration) (bool, error) {
	if l.down.Load() {
		return false, errors.New("database unreachable")
	}
	return true, nil
}

func (l *downLeaser) ReleaseLease(context.Context, string, string) error { return nil }

// TestLeaseOutageIsLoggedOnce: while the store does not answer, the lease
// is tried every ttl/3 and the log says so once, not at every try; once
// the store answers, that is said once and the lease is taken.
func TestLeaseOutageIsLoggedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &testutil.SyncBuffer{}
		l := &downLeaser{}
		l.down.Store(true)
		var runs atomic.Int64
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- gateways.RunUnderLease(ctx, l, "telegram:1", "a", testTTL, zerolog.New(logs), func(ctx context.Context) error {
				runs.Add(1)
				<-ctx.Done()
				return nil
			})
		}()
		time.Sleep(10 * testTTL) // 30 tries
		synctest.Wait()
		if n := strings.Count(logs.String(), "could not be taken"); n != 1 {
			t.Errorf("30 failed tries logged %d times; want once:\n%s", n, logs)
		}
		l.down.Store(false)
		time.Sleep(testTTL / 3)
		synctest.Wait()
		if runs.Load() != 1 || strings.Count(logs.String(), "the store answers again") != 1 {
			t.Errorf("after the store is back: %d runs, log:\n%s\nwant 1 run and one line saying so", runs.Load(), logs)
		}
		cancel()
		<-done
	})
}
