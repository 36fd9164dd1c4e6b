package gatewaytest

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// StoreDownInbox is an Inbox, with gateways.Availability, whose store can
// be lost: while Down is set, Available and Submit refuse with an error
// wrapping core.ErrUnavailable (as the App's inbox does on a shared store
// that does not answer) and nothing is recorded; otherwise it records into
// Inbox.
type StoreDownInbox struct {
	*testutil.Inbox
	Down    atomic.Bool
	refused atomic.Int64
	asked   atomic.Int64
}

var _ gateways.Availability = (*StoreDownInbox)(nil)

// NewStoreDownInbox returns a StoreDownInbox with its store up.
func NewStoreDownInbox() *StoreDownInbox { return &StoreDownInbox{Inbox: testutil.NewInbox()} }

// Available refuses while Down is set.
func (i *StoreDownInbox) Available(context.Context) error {
	i.asked.Add(1)
	if i.Down.Load() {
		return fmt.Errorf("%w: the test's store is down", core.ErrUnavailable)
	}
	return nil
}

// Submit records s unless Down is set.
func (i *StoreDownInbox) Submit(ctx context.Context, s core.Signal) error {
	if err := i.Available(ctx); err != nil {
		i.refused.Add(1)
		return err
	}
	return i.Inbox.Submit(ctx, s)
}

// Refused is how many signals Submit refused.
func (i *StoreDownInbox) Refused() int { return int(i.refused.Load()) }

// Asked is how many times Available was asked (Submit asks too).
func (i *StoreDownInbox) Asked() int { return int(i.asked.Load()) }
