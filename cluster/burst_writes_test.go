package cluster

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/gateways"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestRowWritesPerMessageInABurst: messages that arrive while their
// conversations are busy and every turn slot is taken (a burst) write no
// more rows each than one answered alone (maxRowWrites): put, then done,
// with no claim of their own. The turn that ends takes the next one in
// the row write that marks it done (FinishNextInbox). Counted exactly, as
// TestRowWritesPerMessage counts, with one claim allowed per turn slot: a
// slot's first turn of the burst may be claimed rather than put claimed
// (the claim loop, looking for work, holds a slot for a moment).
func TestRowWritesPerMessageInABurst(t *testing.T) {
	dsn := pgtest.DSN(t)
	f := fakeoai.Start(t)
	var hold atomic.Bool // the model answers nothing while set
	f.Respond(func(fakeoai.Request) fakeoai.Step {
		return fakeoai.Text(fakeoai.DefaultAnswer).Until(func() bool { return !hold.Load() })
	})
	const slots = 2
	p := startCounted(t, dsn, f, slots, gateways.Limits{Global: gateways.Limit{N: 1000, Per: time.Second}, PerChat: gateways.Limit{N: 100, Per: time.Second}})
	// Each conversation's first turn creates its rows (a send slot, the
	// day's usage): what is counted is conversations going on.
	chats := []string{"1", "2", "3", "4"}
	for _, c := range chats {
		p.submit(c)
		p.answered("the first turn of chat " + c)
	}
	countWrites(t, p.conn)
	// The burst: the model holds its answers until every message is in,
	// so that all but the two turns the slots run wait in the inbox
	// behind their conversations' earlier messages.
	hold.Store(true)
	const messages = 40
	for i := range messages {
		p.submit(chats[i%len(chats)])
	}
	testutil.WaitFor(t, "the burst in the inbox", func() bool {
		return p.count(`SELECT count(*) FROM inbox WHERE done = 0`) == messages
	})
	queued := p.count(`SELECT count(*) FROM inbox WHERE done = 0 AND claimed = 0`)
	hold.Store(false)
	p.answered("the burst answered")
	if queued < messages-slots {
		t.Fatalf("%d of %d messages waited in the inbox; want all but the %d the turn slots took", queued, messages, slots)
	}
	// Each message ran its own turn from the start: its question and its
	// answer in the history.
	if q, a := p.count(`SELECT count(*) FROM messages WHERE role = 'user'`), p.count(`SELECT count(*) FROM messages WHERE role = 'assistant'`); q != p.n || a != p.n {
		t.Fatalf("the history has %d questions and %d answers; want %d of each", q, a, p.n)
	}
	per, parts := rowsPerMessage(t, p.conn, messages, "%s %.2f")
	t.Logf("rows written per message in a burst: %.2f (%s)", per, parts)
	if most := maxRowWrites + float64(slots)/messages; per > most {
		t.Errorf("%.2f rows written per message in a burst (%s); want at most %.2f (%d, and a claim per turn slot)",
			per, parts, most, maxRowWrites)
	}
}
