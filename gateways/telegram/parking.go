package telegram

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/gatehouse-bot/gatehouse/gateways"
)

// maxParkedBody bounds the body of an update parked in the store: far
// above what Telegram sends for one message. A larger one is given up
// untracked, as past maxParked.
const maxParkedBody = 64 << 10

// parkTimeout bounds each write of the parking, which runs even when the
// gateway's context has just ended: an update confirmed to Telegram must
// be in the store, and one done must leave it.
const parkTimeout = 5 * time.Second

// parkScope is the scope of this bot's parked updates.
func (g *Gateway) parkScope() string {
	return fmt.Sprintf("%s:%d", Name, g.bot.Self.ID)
}

// park writes to the store the bodies of the updates given up past
// maxHeld since the last batch, before the next poll confirms them to
// Telegram; raws is the batch, which holds them (a batch starts at the
// oldest update in progress). It returns the updates given up whose
// bodies are not in the store: a crash before they are done loses them.
func (g *Gateway) park(ctx context.Context, o *offsets, raws [][]byte) (lost []int) {
	ids, lost := o.toPark()
	if len(ids) == 0 {
		return lost
	}
	bodies := make(map[int64][]byte, len(ids))
	for _, raw := range raws {
		if id, ok := batchUpdateID(raw); ok && len(raw) <= maxParkedBody && slices.Contains(ids, id) {
			bodies[int64(id)] = raw
		}
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), parkTimeout)
	defer cancel()
	err := g.parking.Park(pctx, g.parkScope(), bodies)
	if err != nil {
		g.log.Warn().Err(err).Ints("update_ids", ids).Msg("cannot park updates confirmed while in progress")
	}
	var written []int
	for _, id := range ids {
		if _, ok := bodies[int64(id)]; ok && err == nil {
			written = append(written, id)
			g.inFlight.Store(id, struct{}{})
		} else {
			lost = append(lost, id)
		}
	}
	for _, id := range o.parkedAs(written, true) {
		g.unpark(ctx, id)
	}
	o.parkedAs(lost, false)
	return lost
}

// unpark forgets update id's parked body once it is done. A failure is
// logged: a restart would hand the update over again.
func (g *Gateway) unpark(ctx context.Context, id int) {
	g.inFlight.Delete(id)
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), parkTimeout)
	defer cancel()
	if err := g.parking.Unpark(uctx, g.parkScope(), int64(id)); err != nil {
		g.log.Warn().Err(err).Int("update_id", id).Msg("cannot unpark a done update; a restart hands it over again")
	}
}

// handOverParked hands over again the updates a previous run parked (see
// park), lowest first, before the first poll, except those this process
// parked and still runs (polling starts again when a lease is taken
// back). Each stays parked until it
// is done; one Telegram still holds is not handed over twice (restore).
// It returns an error only when ctx ended. When the inbox refuses one
// (the store unreachable) the rest stay parked for the next start.
func (g *Gateway) handOverParked(ctx context.Context, inbox gateways.Inbox, o *offsets) error {
	bodies, err := g.parking.Parked(ctx, g.parkScope(), maxParked)
	if err != nil {
		g.log.Warn().Err(err).Msg("cannot read the parked updates; they are handed over at the next start")
		return nil
	}
	if len(bodies) == 0 {
		return nil
	}
	ids := make([]int, 0, len(bodies))
	for id := range bodies {
		// Polling again under a lease taken back: this process's own
		// parked updates are still in its engine.
		if _, mine := g.inFlight.Load(int(id)); !mine {
			ids = append(ids, int(id))
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	o.restore(ids)
	for _, id := range ids {
		g.inFlight.Store(id, struct{}{})
	}
	g.log.Info().Int("updates", len(ids)).Msg("handing over again the updates parked by the last run")
	for i, id := range ids {
		done := func() {
			if o.finish(id) {
				g.unpark(ctx, id)
			}
		}
		submitted, err := g.handleRaw(ctx, inbox, id, bodies[int64(id)], done)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			g.log.Warn().Err(err).Int("update_id", id).Msg("a parked update was refused; it and the later ones are handed over at the next start")
			o.unrestore(ids[i:])
			for _, id := range ids[i:] {
				g.inFlight.Delete(id)
			}
			return nil
		}
		if !submitted {
			done()
		}
	}
	return nil
}

// memParking keeps parked updates in memory when no store is given.
type memParking struct {
	mu sync.Mutex
	m  map[string]map[int64][]byte
}

func newMemParking() *memParking { return &memParking{m: make(map[string]map[int64][]byte)} }

// Park stores copies of the bodies; a parked id keeps its first body.
func (p *memParking) Park(_ context.Context, scope string, updates map[int64][]byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m[scope] == nil {
		p.m[scope] = make(map[int64][]byte)
	}
	for id, body := range updates {
		if _, ok := p.m[scope][id]; !ok {
			p.m[scope][id] = slices.Clone(body)
		}
	}
	return nil
}

// Unpark forgets id.
func (p *memParking) Unpark(_ context.Context, scope string, id int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m[scope], id)
	return nil
}

// Parked returns at most limit bodies, the lowest ids.
func (p *memParking) Parked(_ context.Context, scope string, limit int) (map[int64][]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := slices.Sorted(maps.Keys(p.m[scope]))
	out := make(map[int64][]byte)
	for _, id := range ids[:min(len(ids), max(limit, 0))] {
		out[id] = p.m[scope][id]
	}
	return out, nil
}
