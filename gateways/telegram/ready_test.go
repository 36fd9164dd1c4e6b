package telegram

import (
	"strings"
	"testing"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestReadyFollowsThePolls: not ready before a getUpdates is answered,
// ready after, and not ready again once the polls hang past the poll
// window; each failed poll counts as a reconnect.
func TestReadyFollowsThePolls(t *testing.T) {
	reg := metrics.New()
	fake := newFake()
	fake.FailNext("getUpdates", 1, faketg.FaultServer)
	h := newHarnessOn(t, fake, func(_ *Config, d *Deps) { d.Metrics = reg })
	if err := h.gw.Ready(); err == nil {
		t.Fatal("ready before Run")
	}
	h.start()
	testutil.WaitFor(t, "ready", func() bool { return h.gw.Ready() == nil })
	var out strings.Builder
	if err := reg.WritePrometheus(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `gatehouse_gateway_reconnects_total{gateway="telegram"} 1`) {
		t.Errorf("a failed poll is not counted as a reconnect:\n%s", out.String())
	}
	// Every poll from now on hangs until abandoned by the stall watchdog.
	fake.FailNext("getUpdates", 1000, faketg.FaultHang)
	testutil.WaitFor(t, "not ready once the polls hang", func() bool { return h.gw.Ready() != nil })
	if err := h.gw.Ready(); strings.Contains(err.Error(), testToken) {
		t.Errorf("Ready's error holds the token: %v", err)
	}
}
