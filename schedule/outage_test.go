package schedule

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// outageSlots fails every claim while down is set, and grants it otherwise.
type outageSlots struct{ down atomic.Bool }

func (o *outageSlots) ClaimScheduleSlot(context.Context, string, time.Time, string) (bool, error) {
	if o.down.Load() {
		return false, errors.New("database unreachable")
	}
	return true, nil
}

// TestSlotOutageIsLoggedOnce: while the store does not answer, every slot
// is skipped, and the log says so once (an error), not once per slot;
// once slots can be claimed again, that is said once and runs resume.
func TestSlotOutageIsLoggedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &testutil.SyncBuffer{}
		slots := &outageSlots{}
		slots.down.Store(true)
		_, in, cancel, done := start(t, []Entry{{Name: "beat", Cron: "@every 1s", Conv: conv, Prompt: "b"}},
			Options{Slots: slots, Log: zerolog.New(logs).Level(zerolog.InfoLevel)})
		defer func() { cancel(); <-done }()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := strings.Count(logs.String(), "its slot could not be claimed"); n != 1 {
			t.Errorf("5 slots skipped logged %d times at info level or above; want once:\n%s", n, logs)
		}
		slots.down.Store(false)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got, _ := in.signals(); len(got) == 0 {
			t.Fatal("no run once slots can be claimed again")
		}
		if n := strings.Count(logs.String(), "slots can be claimed again"); n != 1 {
			t.Errorf("the recovery logged %d times; want once:\n%s", n, logs)
		}
	})
}
