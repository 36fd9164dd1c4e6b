package app

import (
	"github.com/gatehouse-bot/gatehouse/cluster"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/store"
)

// sharedDelivery is what the gateways' Outboxes share with the other
// instances when the store is shared (store.Sharer) and has send slots and
// an outbox: nil otherwise (SQLite: one process paces in memory and
// sends its own replies, with no write per reply). It keeps the journal
// for outboxLoop.
func (a *App) sharedDelivery() *gateways.Shared {
	sh, ok := a.store.(store.Sharer)
	if !ok || !sh.Shared() {
		return nil
	}
	slots, ok := a.store.(store.SendSlots)
	if !ok {
		return nil
	}
	box, ok := a.store.(store.Outbox)
	if !ok {
		return nil
	}
	a.journal = cluster.NewReplies(box, a.instance)
	return &gateways.Shared{Slots: cluster.Slots{St: slots, Instance: a.instance}, Journal: a.journal}
}
