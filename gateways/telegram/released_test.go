package telegram

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestGivenUpUpdatesWarnedOncePerBatch: a batch handing over more updates
// than maxHeld while none is done gives up on the oldest ones, and when
// they cannot be parked (the store refuses) says so in one warning naming
// them all, not a line each (in a burst over many chats that was one line
// for nearly every update).
func TestGivenUpUpdatesWarnedOncePerBatch(t *testing.T) {
	h := newHarness(t, withParking(refusingParking{}))
	h.inbox.KeepDone = true // none is done
	const n = maxHeld + 10
	raws := messageBatch(n)
	o := newOffsets(1, nil)
	fresh, err := h.gw.deliverBatch(context.Background(), h.inbox, o, raws)
	if err != nil || fresh != n {
		t.Fatalf("deliverBatch: %d fresh, %v; want %d", fresh, err, n)
	}
	var warned []string
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(line, "confirmed to Telegram anyway") {
			warned = append(warned, line)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], `"update_ids":[1,2,3,4,5,6,7,8,9,10,11]`) {
		t.Fatalf("warnings about updates given up on: %q; want one naming 1 to 11", warned)
	}
}

// refusingParking is a store whose parking is down.
type refusingParking struct{}

func (refusingParking) Park(context.Context, string, map[int64][]byte) error {
	return errors.New("parking refused")
}
func (refusingParking) Unpark(context.Context, string, int64) error { return nil }
func (refusingParking) Parked(context.Context, string, int) (map[int64][]byte, error) {
	return nil, nil
}

// messageBatch is a getUpdates batch of n messages, update ids 1 to n.
func messageBatch(n int) [][]byte {
	raws := make([][]byte, n)
	for i := range raws {
		id := strconv.Itoa(1 + i)
		raws[i] = []byte(`{"update_id":` + id + `,"message":{"message_id":` + id + `,"date":1,"chat":{"id":5,"type":"private"},"from":{"id":5,"first_name":"a"},"text":"m` + id + `"}}`)
	}
	return raws
}
