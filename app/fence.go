package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/cluster"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/hitl"
)

// useFence makes the fence of this instance's calls on a shared store,
// which the heartbeat feeds: it trips once the heartbeat or the workspace
// lease has not been renewed for half of store.lease_ttl, leaving the
// other half for the calls' processes to be killed before another
// instance may take this one for dead. No fence (nil) on a store of its
// own.
func (a *App) useFence() {
	if a.sharedStore() {
		a.fence = cluster.NewFence(a.cfg.Store.LeaseTTL.D()/2, a.log)
		a.member.UseFence(a.fence)
	}
}

// fencedTools is the tool actuator on a shared store: each changing call,
// and each approved call, runs under the fence, which stops it (its
// process group killed by the supervisor) before another instance may
// restore the workspace under it or mark it interrupted.
type fencedTools struct {
	*tools.Registry
	fence *cluster.Fence
}

var _ core.Actuator = fencedTools{}

// Act runs the call, under the fence unless it is read-only and not an
// approved one.
func (f fencedTools) Act(ctx context.Context, a core.Action) (core.Result, error) {
	if ro, known := f.ReadOnly(a.Call.Name); known && ro && a.Approval == "" {
		return f.Registry.Act(ctx, a)
	}
	gctx, release := f.fence.Guard(ctx)
	defer release()
	res, err := f.Registry.Act(gctx, a)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(gctx), cluster.ErrFenced) {
		err = fmt.Errorf("%w (%w)", cluster.ErrFenced, err)
	}
	return res, err
}

// toolActuator is what runs tool calls: the registry, fenced on a shared
// store.
func (a *App) toolActuator() core.Actuator {
	if a.fence == nil {
		return a.tools
	}
	return fencedTools{Registry: a.tools, fence: a.fence}
}

// brokerFence is fence as the broker takes it: nil stays a nil interface.
func brokerFence(fence *cluster.Fence) hitl.Fence {
	if fence == nil {
		return nil
	}
	return fence
}
