package hitltest

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// testGrantsEverywhere: "/approve TOKEN for 30m" on B covers the
// identical call of the request's conversation on A too, under the
// number /rules shows on A, and "/unallow N" on A ends it for B.
func testGrantsEverywhere(t *testing.T, c Cluster) {
	ctx := context.Background()
	a := start(t, c, "a", options{})
	b := start(t, c, "b", options{})
	tok := a.raise(t)
	b.command(t, "/approve "+tok+" for 30m")
	waitStatus(t, a.store, tok, record.StatusExecuted)
	call := core.Action{Kind: core.ActionTool, Conv: clusterConv, From: clusterAsk, Call: clusterCall}
	rule, ok := a.b.Granted(ctx, call)
	if !ok || !strings.HasPrefix(rule, "grant #") {
		t.Fatalf("on A, Granted = %q, %v; want the grant given on B", rule, ok)
	}
	id, _, _ := strings.Cut(strings.TrimPrefix(rule, "grant #"), " ")
	a.command(t, "/unallow "+id)
	if _, ok := b.b.Granted(ctx, call); ok {
		t.Error("a grant ended on A still covers the call on B")
	}
	checkAudited(t, a.store, map[string]int{"granted": 1, "unallowed": 1})
}
