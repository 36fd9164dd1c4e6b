package app

import (
	"github.com/gatehouse-bot/gatehouse/cluster"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/store"
)

// buildInbox builds the durable inbox when the store is shared by several
// instances (store.Sharer) and keeps one (store.Inbox), and returns it as
// the Engine's Journal; otherwise nil: every message stays in memory, as
// with SQLite, with no write per message.
func (a *App) buildInbox() (core.Journal, error) {
	sh, ok := a.store.(store.Sharer)
	if !ok || !sh.Shared() {
		return nil, nil
	}
	st, ok := a.store.(store.Inbox)
	if !ok {
		return nil, nil
	}
	process := ""
	if a.member != nil {
		process = a.member.Process()
	}
	in, err := cluster.New(cluster.Config{Store: st, Instance: a.instance, TTL: a.cfg.Store.LeaseTTL.D(),
		Process: process, Slots: a.cfg.Engine.Concurrency, Log: a.log})
	if err != nil {
		return nil, err
	}
	a.durable = in
	return in, nil
}

// inboxGateways tells the inbox which gateways' messages it takes: every
// gateway built but one whose input is this process's own (the terminal, a
// gateways.InputEnder), whose conversations no other instance can answer.
func (a *App) inboxGateways() {
	if a.durable == nil {
		return
	}
	var names []string
	for _, gw := range a.gateways {
		if _, local := gw.(gateways.InputEnder); !local {
			names = append(names, gw.Name())
		}
	}
	a.durable.UseGateways(names)
}
