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

// clusterHold is this instance's side of the leases: its run lease held,
// and renewed every ttl/3, while at least one of its changing calls runs.
type clusterHold struct {
	leases   Leases
	instance string
	ttl      time.Duration
	log      zerolog.Logger

	mu      sync.Mutex
	running int                // changing calls between enter and leave
	stop    context.CancelFunc // ends the renewal; under mu
	done    chan struct{}      // closed when the renewal has ended
}

// enter holds this instance's run lease for one more changing call, then
// waits while another instance's /undo restores the workspace (bounded by
// ctx). A store that does not answer is logged: the call runs, as a lone
// instance's would.
func (h *clusterHold) enter(ctx context.Context) {
	h.mu.Lock()
	h.running++
	if h.running == 1 {
		if _, err := h.leases.AcquireLease(ctx, runLease+h.instance, h.instance, h.ttl); err != nil {
			h.log.Warn().Err(err).Msg("checkpoint: the run lease could not be taken: an /undo on another instance may not see this call")
		}
		rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		h.stop, h.done = stop, make(chan struct{})
		go h.renew(rctx, runLease+h.instance, h.done)
	}
	h.mu.Unlock()
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
	ctx, cancel := context.WithTimeout(context.Background(), h.ttl)
	defer cancel()
	if err := h.leases.ReleaseLease(ctx, runLease+h.instance, h.instance); err != nil {
		h.log.Warn().Err(err).Msg("checkpoint: the run lease could not be released: another instance's /undo waits for it to expire")
	}
}

// renew renews the lease name every ttl/3 until ctx ends, then closes done.
func (h *clusterHold) renew(ctx context.Context, name string, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(h.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := h.leases.AcquireLease(ctx, name, h.instance, h.ttl); err != nil && ctx.Err() == nil {
				h.log.Warn().Err(err).Str("lease", name).Msg("checkpoint: lease renewal failed")
			}
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
	go h.renew(rctx, undoLease, done)
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
