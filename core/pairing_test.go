package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// pairedSet is a core.Pairing that only knows who is paired.
type pairedSet map[core.Identity]bool

func (p pairedSet) Paired(id core.Identity) bool { return p[id] }
func (p pairedSet) Check(_ context.Context, id core.Identity) (bool, error) {
	return p[id], nil
}
func (pairedSet) Offer(context.Context, core.Identity, core.Conversation) (string, time.Time, error) {
	return "", time.Time{}, nil
}
func (pairedSet) Pair(context.Context, core.Identity, core.Conversation, string) (string, core.Conversation) {
	return "", core.Conversation{}
}
func (pairedSet) PairsText(context.Context) string                                        { return "" }
func (pairedSet) Unpair(context.Context, core.Identity, core.Conversation, string) string { return "" }

// TestAuthPairedIdentities: a paired identity is let in on its own
// gateway, in any chat there as an allow list entry would be, only while
// that gateway's pairing is on; never as an identity of another gateway.
func TestAuthPairedIdentities(t *testing.T) {
	auth := core.NewAuth(nil, []core.Identity{"test:boss"})
	dm := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "test", Chat: "42"}, From: "test:42", Private: true}
	group := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "test", Chat: "-100"}, From: "test:42"}
	forged := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "other", Chat: "42"}, From: "test:42", Private: true}
	set := pairedSet{"test:42": true}
	for _, c := range []struct {
		name    string
		pairing core.Pairing
		on      []string
		s       core.Signal
		want    bool
	}{
		{"no pairing", nil, []string{"test"}, dm, false},
		{"paired, pairing on", set, []string{"test"}, dm, true},
		{"paired, in a group", set, []string{"test"}, group, true},
		{"pairing off on the gateway", set, []string{"other"}, dm, false},
		{"pairing off everywhere", set, nil, dm, false},
		{"another gateway's conversation", set, []string{"test", "other"}, forged, false},
		{"not paired", pairedSet{}, []string{"test"}, dm, false},
	} {
		auth.SetPairing(c.pairing, c.on)
		if got := auth.Allowed(c.s); got != c.want {
			t.Errorf("%s: Allowed = %v; want %v", c.name, got, c.want)
		}
	}
	auth.SetPairing(set, []string{"test"})
	if !auth.Pairs("test") || auth.Pairs("other") {
		t.Errorf("Pairs(test), Pairs(other) = %v, %v; want true, false", auth.Pairs("test"), auth.Pairs("other"))
	}
	auth.Set(nil, []core.Identity{"test:boss"}) // a reload of the lists keeps the pairing
	if !auth.Allowed(dm) {
		t.Error("after Set the paired identity is no longer let in")
	}
}
