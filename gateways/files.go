package gateways

import (
	"context"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/core"
)

// FileStep makes one attempt at one request of a file's delivery: one API
// request, no retries of its own. It may keep state for the next step
// (the upload URL a first request returned) or the next attempt (another
// form after a refusal classified RetryAfter with no pause).
type FileStep func(ctx context.Context) error

// File delivers a file to conv as a kind of send: its steps (one request
// on most platforms, an upload flow's requests in order on others) are
// made one after the other, after every earlier send or edit to conv and
// before the later ones, each paced, classified and retried within the
// deadline exactly like a chunk of a reply. When a step finally fails,
// the later steps are not made; that is logged with the conversation key,
// counted and returned. A delivered file counts as one message sent.
func (o *Outbox) File(ctx context.Context, conv core.Conversation, steps ...FileStep) error {
	release, err := o.order.acquire(ctx, conv.Key())
	if err != nil {
		return o.report(ctx, conv, "file", err)
	}
	defer release()
	for i, step := range steps {
		if err := o.deliver(ctx, conv, step); err != nil {
			if len(steps) > 1 {
				err = fmt.Errorf("step %d of %d: %w", i+1, len(steps), err)
			}
			return o.report(ctx, conv, "file", err)
		}
	}
	o.sent.Add(1)
	o.cfg.Metrics.Sent()
	return nil
}
