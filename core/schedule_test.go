package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// TestAuthAdmitsOnlyTheSchedulersOwnSignals: a schedule's run is admitted
// where the allow list is closed; the schedule identity without the
// scheduler's field, a gateway identity with it, or a mismatched pair are
// refused — even with the schedule identity listed as an approver.
func TestAuthAdmitsOnlyTheSchedulersOwnSignals(t *testing.T) {
	closed := core.NewAuth(map[string][]string{"telegram": {}}, []core.Identity{"schedule:beat", "telegram:boss"})
	conv := core.Conversation{Gateway: "telegram", Chat: "100"}
	for _, c := range []struct {
		name     string
		from     core.Identity
		schedule string
		want     bool
	}{
		{"the scheduler's run", "schedule:beat", "beat", true},
		{"schedule identity without the field", "schedule:beat", "", false},
		{"another schedule's identity", "schedule:other", "beat", false},
		{"a gateway user with the field", "telegram:55", "beat", false},
		{"an approver with the field", "telegram:boss", "beat", false},
		{"an approver as usual", "telegram:boss", "", true},
	} {
		s := core.Signal{Kind: core.KindMessage, Conv: conv, From: c.from, Schedule: c.schedule}
		if got := closed.Allowed(s); got != c.want {
			t.Errorf("%s: Allowed = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestScheduledRunIsATurnInAClosedConversation: through the Engine, a
// scheduled message reaches the model and its reply goes to the
// conversation although the allow list admits nobody.
func TestScheduledRunIsATurnInAClosedConversation(t *testing.T) {
	h := newHarness(t, harnessOpts{allow: []string{}})
	h.fake().Push(fakeoai.Text("all quiet"))
	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "test", Chat: "c1"},
		From: core.ScheduleIdentity("beat"), Schedule: "beat", Text: "report"}
	if err := h.eng.Submit(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := h.gw.next(t).Text; got != "all quiet" {
		t.Fatalf("reply = %q, want the model's answer", got)
	}
	// The same text from the identity alone is refused.
	s.Schedule = ""
	if err := h.eng.Submit(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := h.gw.next(t).Text; !strings.Contains(got, "allow list") {
		t.Fatalf("reply to a forged schedule identity = %q, want the refusal", got)
	}
	if n := len(h.fake().Requests()); n != 1 {
		t.Errorf("the model saw %d requests, want 1", n)
	}
}

type lister []core.ScheduleInfo

func (l lister) Schedules() []core.ScheduleInfo { return l }

func TestSchedulesCommand(t *testing.T) {
	next := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	h := newHarness(t, harnessOpts{schedules: lister{
		{Name: "disk", Cron: "0 9 * * *", Conv: core.Conversation{Gateway: "test", Chat: "ops"}, Next: next},
	}})
	h.say(t, "c1", "/schedules")
	got := h.gw.next(t).Text
	if want := "disk — 0 9 * * * in test:ops, next run 2026-11-24 09:00:00 UTC"; !strings.Contains(got, want) {
		t.Errorf("/schedules = %q, want a line %q", got, want)
	}
	h.say(t, "c1", "/help")
	if help := h.gw.next(t).Text; !strings.Contains(help, "/schedules") {
		t.Errorf("/help lacks /schedules:\n%s", help)
	}
	empty := newHarness(t, harnessOpts{})
	empty.say(t, "c1", "/schedules")
	if got := empty.gw.next(t).Text; !strings.Contains(got, "No schedules") {
		t.Errorf("/schedules without any = %q", got)
	}
	if n := len(h.fake().Requests()); n != 0 {
		t.Errorf("/schedules reached the model (%d requests)", n)
	}
}
