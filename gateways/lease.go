package gateways

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"
)

// Leaser keeps named, expiring leases shared by the instances on one
// store (store.Leases, wired in app): AcquireLease takes a free or
// expired lease, or renews the holder's own, and reports whether holder
// holds it now; ReleaseLease frees holder's lease at once.
type Leaser interface {
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (held bool, err error)
	ReleaseLease(ctx context.Context, name, holder string) error
}

// releaseWait bounds the release of a lease after ctx has ended.
const releaseWait = 5 * time.Second

// RunUnderLease runs run only while holder holds the lease name: a
// connection a platform allows once per token (a long poll for updates)
// runs on one instance at a time.
//
// It tries to take the lease every ttl/3 while another holds it. Once it
// holds it, it calls run with a context that is cancelled when the lease
// is lost, and renews the lease every ttl/3. The lease counts as lost when
// a renewal finds it held by another, or when a renewal fails (the store
// unreachable) half of ttl or more after the last one that succeeded
// (each renewal is given until 5/6 of ttl past it), so that run stops
// before the lease can expire and another instance take it.
// After a loss it waits for run to return and tries to take the lease
// again. When run returns by itself, RunUnderLease releases the lease and
// returns run's error; when ctx ends, it stops run, releases the lease (so
// another instance takes over at once, not after ttl) and returns nil.
func RunUnderLease(ctx context.Context, l Leaser, name, holder string, ttl time.Duration, log zerolog.Logger,
	run func(ctx context.Context) error) error {
	if ttl <= 0 {
		return fmt.Errorf("lease %q: ttl %v is not positive", name, ttl)
	}
	every := ttl / 3
	log = log.With().Str("lease", name).Str("holder", holder).Logger()
	waiting := false // logged once per wait, not every ttl/3
	failing := false // likewise, while the store does not answer
	for {
		asked := time.Now() // a lease taken now runs to at least asked+ttl
		held, err := l.AcquireLease(ctx, name, holder, ttl)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			if !failing {
				failing = true
				log.Warn().Err(err).Msg("lease: could not be taken; trying again every ttl/3")
			}
		case failing:
			failing = false
			log.Info().Msg("lease: the store answers again")
		}
		switch {
		case err != nil:
		case held:
			waiting = false
			log.Info().Msg("lease: taken")
			done, err := runHeld(ctx, l, name, holder, ttl, asked, log, run)
			if done {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseWait)
				if rerr := l.ReleaseLease(rctx, name, holder); rerr != nil {
					log.Warn().Err(rerr).Msg("lease: not released; it expires by itself")
				}
				cancel()
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			log.Warn().Msg("lease: lost; run stopped, trying to take it again")
		case !waiting:
			waiting = true
			log.Debug().Msg("lease: held by another instance; waiting")
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// runHeld runs run while the lease, taken at renewed, is renewed every
// ttl/3. done is true when run returned by itself or ctx ended (err is
// run's error), false when the lease was lost (run has returned, its error
// dropped: it was stopped).
func runHeld(ctx context.Context, l Leaser, name, holder string, ttl time.Duration, renewed time.Time,
	log zerolog.Logger, run func(ctx context.Context) error) (done bool, err error) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	result := make(chan error, 1)
	go func() { result <- run(rctx) }()
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	for {
		select {
		case err := <-result:
			return true, err
		case <-ctx.Done():
			cancel()
			return true, <-result
		case <-tick.C:
		}
		at := time.Now()
		// A renewal that hangs must not outlast the time to stop run, a
		// sixth of ttl before the lease can expire.
		actx, acancel := context.WithDeadline(rctx, renewed.Add(5*ttl/6))
		held, err := l.AcquireLease(actx, name, holder, ttl)
		acancel()
		switch {
		case rctx.Err() != nil:
			continue // ctx ended or run returned: the next select says which
		case err == nil && held:
			renewed = at
			continue
		case err == nil:
			log.Warn().Msg("lease: held by another instance")
		case at.Sub(renewed) < ttl/2:
			// The next renewal, ttl/3 on, still comes before the lease
			// can expire.
			log.Warn().Err(err).Msg("lease: could not be renewed; trying again")
			continue
		default:
			log.Warn().Err(err).Msg("lease: could not be renewed in time")
		}
		cancel()
		if err := <-result; err != nil && !errors.Is(err, context.Canceled) {
			log.Warn().Err(err).Msg("lease: run stopped with an error")
		}
		return false, nil
	}
}
