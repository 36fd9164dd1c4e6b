package core_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// staleSet is a core.Pairing whose in-memory set has not yet seen a
// pairing another instance made (Paired false) while the store has it
// (Check true), as for up to a refresh after /pair on another instance.
type staleSet struct {
	pairedSet
	checks atomic.Int32
}

func (s *staleSet) Check(context.Context, core.Identity) (bool, error) {
	s.checks.Add(1)
	return true, nil
}

// TestJournaledMessageOfANewlyPairedIdentity: a message another instance
// admitted and put in the journal, from an identity paired there a moment
// ago, runs its turn on the instance that claims it even before that
// instance's paired set caught up (it asks the store), instead of being
// refused as a stranger's (and lost). A stranger's message never gets
// there (it is never journaled), so the store is not asked for theirs.
func TestJournaledMessageOfANewlyPairedIdentity(t *testing.T) {
	auth := core.NewAuth(map[string][]string{"test": {}}, []core.Identity{"test:boss"})
	set := &staleSet{pairedSet: pairedSet{}}
	auth.SetPairing(set, []string{"test"})
	h := newHarness(t, harnessOpts{journal: &memJournal{}, auth: auth})
	h.fake().Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Text("welcome") })

	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "test", Chat: "42"}, From: "test:42",
		Text: "hello, I am in", MessageID: "9", Private: true}
	ran, err := h.eng.RunJournaled(context.Background(), core.Journaled{Signal: s, Record: (&stages{}).record})
	if err != nil || !ran {
		t.Fatalf("RunJournaled = %v, %v", ran, err)
	}
	if got := h.gw.next(t).Text; got != "welcome" {
		t.Fatalf("the newcomer's journaled message was answered %q; want the model's answer", got)
	}
	if n := len(h.fake().Requests()); n != 1 {
		t.Errorf("the model saw %d requests; want 1", n)
	}
}

// codeSet is a staleSet that hands out a code.
type codeSet struct{ staleSet }

func (*codeSet) Offer(context.Context, core.Identity, core.Conversation) (string, time.Time, error) {
	return "K7QMX9P2", time.Now().Add(time.Hour), nil
}

// TestNewcomerPairedElsewhereIsAnswered: a newcomer given a code here and
// paired on another instance writes again (they were told they can talk
// now) before this instance's paired set caught up: their message is
// answered (the store is asked), not dropped without a word as a repeat
// of a stranger told within ten minutes.
func TestNewcomerPairedElsewhereIsAnswered(t *testing.T) {
	auth := core.NewAuth(map[string][]string{"test": {}}, []core.Identity{"test:boss"})
	set := &codeSet{staleSet{pairedSet: pairedSet{}}}
	auth.SetPairing(set, []string{"test"})
	h := newHarness(t, harnessOpts{auth: auth})
	h.fake().Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Text("welcome") })
	dm := func(text string) {
		s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "test", Chat: "42"}, From: "test:42", Text: text, Private: true}
		if err := h.eng.Submit(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	dm("let me in")
	if got := h.gw.next(t).Text; !strings.Contains(got, "K7QMX9P2") {
		t.Fatalf("the stranger was answered %q; want their code", got)
	}
	if n := set.checks.Load(); n != 0 {
		t.Errorf("the store was asked %d times for a stranger's first message; want never", n)
	}
	dm("hello, I am in")
	if got := h.gw.next(t).Text; got != "welcome" {
		t.Fatalf("the newcomer's message was answered %q; want the model's answer", got)
	}
}
