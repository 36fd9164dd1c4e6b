package checkpoint

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Leases are the store's named expiring locks among the instances sharing
// a workspace (store.Leases, with the holders of a name's prefix):
// through them a restore on one instance is refused while a changing tool
// call runs on another, as Manager.runs does within one instance.
type Leases interface {
	// AcquireLease takes or renews the lease name for holder until ttl
	// from now, and reports whether holder holds it.
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	// ReleaseLease frees the lease name if holder holds it.
	ReleaseLease(ctx context.Context, name, holder string) error
	// LeaseHoldersOf lists the holders of the unexpired leases whose name
	// starts with prefix.
	LeaseHoldersOf(ctx context.Context, prefix string) ([]string, error)
}

// The leases' names: each instance with a changing call running holds
// runLease+its name; a restore holds undoLease.
const (
	runLease  = "checkpoint run "
	undoLease = "checkpoint undo"
)

// Fence is told of this instance's run lease (cluster.Fence): it stops
// the changing calls once a renewal is too old for the lease to be
// trusted.
type Fence interface {
	// Renewed says that a take or renewal of the lease key that began at
	// start succeeded.
	Renewed(key string, start time.Time)
	// Released says the lease key is let go.
	Released(key string)
}

// clusterHold is this instance's side of the leases: its run lease held,
// and renewed every ttl/3, while at least one of its changing calls runs.
type clusterHold struct {
	leases   Leases
	instance string
	ttl      time.Duration
	fence    Fence // nil: none
	log      zerolog.Logger

	mu      sync.Mutex
	running int                // changing calls between enter and leave
	stop    context.CancelFunc // ends the renewal; under mu
	done    chan struct{}      // closed when the renewal has ended
	held    chan struct{}      // closed once the run lease is first held
}

// enter holds this instance's run lease for one more changing call, then
// waits while another instance's /undo restores the workspace (bounded by
// ctx). Until the lease is held the call waits too, for as long as ctx
// lets it (the fence ends it when the database stays out of reach): a
// changing call that ran without it could be restored under by an /undo
// on another instance.
func (h *clusterHold) enter(ctx context.Context) {
	h.mu.Lock()
	h.running++
	if h.running == 1 {
		rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		h.stop, h.done, h.held = stop, make(chan struct{}), make(chan struct{})
		go h.renew(rctx, runLease+h.instance, h.held, h.done)
	}
	held := h.held
	h.mu.Unlock()
	select {
	case <-held:
	case <-ctx.Done():
		return
	}
	for {
		holders, err := h.leases.LeaseHoldersOf(ctx, undoLease)
		if err != nil || !otherThan(holders, h.instance) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(h.ttl / 30):
		}
	}
}

// leave ends one changing call's hold; the last one releases the lease.
func (h *clusterHold) leave() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.running--
	if h.running > 0 {
		return
	}
	h.stop()
	<-h.done
	if h.fence != nil {
		h.fence.Released(runLease + h.instance)
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.ttl)
	defer cancel()
	if err := h.leases.ReleaseLease(ctx, runLease+h.instance, h.instance); err != nil {
		h.log.Warn().Err(err).Msg("checkpoint: the run lease could not be released: another instance's /undo waits for it to expire")
	}
}

// renew renews the lease name every ttl/3 until ctx ends, then closes
// done. With held (the run lease) it takes the lease at once, tries again
// every ttl/30 until it holds it, closes held then, and tells the fence
// when each success began.
func (h *clusterHold) renew(ctx context.Context, name string, held, done chan struct{}) {
	defer close(done)
	wait := h.ttl / 3
	failing := false
	if held != nil {
		wait = 0
	}
	for {
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		start := time.Now()
		actx, cancel := context.WithTimeout(ctx, h.ttl/3)
		ok, err := h.leases.AcquireLease(actx, name, h.instance, h.ttl)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && ok:
			failing = false
			if held != nil && h.fence != nil {
				h.fence.Renewed(name, start)
			}
			if held != nil {
				select {
				case <-held:
				default:
					close(held)
				}
			}
		case !failing:
			failing = true
			h.log.Warn().Err(err).Bool("held by another", err == nil).Str("lease", name).Msg("checkpoint: the lease could not be taken or renewed; trying again")
		}
		wait = h.ttl / 3
		if held != nil && failing {
			wait = h.ttl / 30
		}
	}
}

// beginUndo takes the undo lease, which keeps other instances' changing
// calls from starting, and returns the func that ends the hold; or the
// reply that refuses the restore: another instance restores, or runs a
// changing call, or the store does not answer.
func (h *clusterHold) beginUndo(ctx context.Context) (refusal string, end func()) {
	const storeDown = "The database does not answer, so whether another instance is changing the workspace is unknown; nothing was changed. /undo again in a moment."
	held, err := h.leases.AcquireLease(ctx, undoLease, h.instance, h.ttl)
	if err != nil {
		h.log.Error().Err(err).Msg("checkpoint: the undo lease could not be taken; /undo refused")
		return storeDown, nil
	}
	if !held {
		return "Another /undo is restoring the workspace right now, on another instance; this one did nothing. /checkpoints shows where things stand once it is done.", nil
	}
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go h.renew(rctx, undoLease, nil, done)
	end = func() {
		stop()
		<-done
		ctx, cancel := context.WithTimeout(context.Background(), h.ttl)
		defer cancel()
		if err := h.leases.ReleaseLease(ctx, undoLease, h.instance); err != nil {
			h.log.Warn().Err(err).Msg("checkpoint: the undo lease could not be released: other instances' changing calls wait for it to expire")
		}
	}
	holders, err := h.leases.LeaseHoldersOf(ctx, runLease)
	if err != nil {
		end()
		h.log.Error().Err(err).Msg("checkpoint: the run leases could not be read; /undo refused")
		return storeDown, nil
	}
	for _, who := range holders {
		if who != h.instance {
			end()
			return fmt.Sprintf("A tool call that may change the workspace is running on instance %s; /undo once it has ended (/cancel stops it).", who), nil
		}
	}
	return "", end
}

// otherThan reports whether holders names an instance other than me.
func otherThan(holders []string, me string) bool {
	for _, h := range holders {
		if h != me {
			return true
		}
	}
	return false
}
