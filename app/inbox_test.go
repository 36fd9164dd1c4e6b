package app

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/store"
)

// inboxStore is a shared store that keeps an inbox.
type inboxStore struct {
	sharedStore
	store.Inbox
}

// TestInboxOnlyOnASharedStore: the Engine gets the durable inbox as its
// Journal only when the store is shared and keeps one; otherwise (SQLite)
// every message stays in memory, with no write per message.
func TestInboxOnlyOnASharedStore(t *testing.T) {
	for _, tc := range []struct {
		name  string
		st    store.Store
		inbox bool
	}{
		{"not a Sharer", &pruneStore{}, false},
		{"not shared", inboxStore{sharedStore: sharedStore{shared: false}}, false},
		{"shared, no inbox", sharedStore{shared: true}, false},
		{"shared", inboxStore{sharedStore: sharedStore{shared: true}}, true},
	} {
		cfg := &config.Config{Store: config.Store{LeaseTTL: config.Duration(7 * time.Second)}}
		a := &App{store: tc.st, instance: "host-a-9", cfg: cfg}
		j, err := a.buildInbox()
		if err != nil || (j != nil) != tc.inbox || (a.durable != nil) != tc.inbox {
			t.Fatalf("%s: journal %v, %v; want one: %v", tc.name, j, err, tc.inbox)
		}
	}
}

// localGateway is a gateway whose input is this process's own.
type localGateway struct{ named }

func (localGateway) EndOfInput() <-chan struct{} { return nil }

type named string

func (n named) Name() string                                        { return string(n) }
func (named) Run(context.Context, gateways.Inbox) error             { return nil }
func (named) Act(context.Context, core.Action) (core.Result, error) { return core.Result{}, nil }

// putCounter is an inbox that counts its puts.
type putCounter struct {
	store.Inbox // only PutInbox is called
	puts        []string
}

func (p *putCounter) PutInbox(_ context.Context, e store.InboxEntry, _ time.Duration) (int64, bool, error) {
	p.puts = append(p.puts, e.Conv)
	return int64(len(p.puts)), true, nil
}

// TestInboxLeavesTheTerminalInMemory: the inbox takes the messages of
// every gateway but one whose input is this process's (the terminal):
// another instance could not answer it.
func TestInboxLeavesTheTerminalInMemory(t *testing.T) {
	cfg := &config.Config{Store: config.Store{LeaseTTL: config.Duration(7 * time.Second)}}
	pc := &putCounter{}
	a := &App{store: inboxStore{sharedStore: sharedStore{shared: true}, Inbox: pc}, instance: "a", cfg: cfg}
	if _, err := a.buildInbox(); err != nil {
		t.Fatal(err)
	}
	a.gateways = []gateways.Gateway{named("chat"), localGateway{named("term")}}
	a.inboxGateways()
	for _, gw := range []string{"chat", "term"} {
		s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: gw, Chat: "1"}, MessageID: "5"}
		took, err := a.durable.Put(context.Background(), s)
		if err != nil || took != (gw == "chat") {
			t.Fatalf("%s: Put = %v, %v; want taken: %v", gw, took, err, gw == "chat")
		}
	}
	if len(pc.puts) != 1 || pc.puts[0] != "chat:1" {
		t.Fatalf("puts %v; want only chat:1", pc.puts)
	}
}
